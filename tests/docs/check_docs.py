#!/usr/bin/env python3
"""The README and docs/ hold together: every relative link resolves (file, and #anchor by
GitHub's heading slugs), the README stays a front door (at most 300 lines), and every command
in the README's shell blocks names something that exists: a `gpucal` verb in `gpucal --help`, a
bench binary in the build, a `.ci/` script, each `--flag` in that program's own --help. A block
whose first line is `# GPU only` is checked for its programs and verbs alone.


A generated block, the text between `<!-- generated: COMMAND -->` and `<!-- end generated -->`
(a table of a registry's rows: `gpucal list WHAT --as markdown`, `bench_gemm --list-impls
--markdown`; a scored comparison: `python3` and a script under tests/ with `build/app/gpucal` and `{tmp}`,
the build's gpucal and a fresh folder), must be what COMMAND prints now, run with the build's programs; a block that
differs is a problem naming the page, line and command. With --update the blocks are rewritten
in place from their commands' output instead, and nothing else is checked.

usage: check_docs.py [--root SOURCE_DIR] [--build BUILD_DIR] [--allow-missing PATH ...] [--update]
SOURCE_DIR defaults to the tree this script is in, BUILD_DIR to SOURCE_DIR/build.
Exit 0 when all holds, 1 with one line per problem, 77 when SOURCE_DIR holds no README.md.
--allow-missing names a page that may be absent (a link to it is then not checked); once it
exists, its links and anchors are checked like any other."""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unicodedata

README_MAX_LINES = 300
FENCE = re.compile(r'^\s*(```+|~~~+)\s*([\w+-]*)')
LINK = re.compile(r'!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
SHELL_INFOS = {'', 'sh', 'bash', 'shell', 'console'}
GPU_ONLY = '# GPU only'
GENERATED_START = re.compile(r'^<!-- generated: (.+?) -->\s*$')
GENERATED_END = '<!-- end generated -->'


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0]
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence and not m.group(2):
                fence = None
            continue
        yield n, line


def code_blocks(text):
    """(first line number, info string, lines) of each fenced code block."""
    blocks, fence, info, start, body = [], None, '', 0, []
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence, info, start, body = m.group(1)[0], m.group(2).lower(), n + 1, []
        elif fence is not None and m and m.group(1)[0] == fence and not m.group(2):
            blocks.append((start, info, body))
            fence = None
        elif fence is not None:
            body.append(line)
    return blocks


def slug(heading):
    """GitHub's anchor for a heading: the rendered text, lower-cased, punctuation and symbols
    dropped (hyphens and underscores kept), spaces made hyphens."""
    text = LINK.sub(lambda m: m.group(1), heading)
    text = re.sub(r'<[^>]+>', '', text).lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LNM':
            out.append(ch)
        elif ch == ' ':
            out.append('-')
    return ''.join(out)


def anchors(path):
    seen, result = {}, set()
    for _, line in prose_lines(open(path, encoding='utf-8').read()):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f'{base}-{count}')
    return result


def inside_code_span(line, pos):
    return line[:pos].count('`') % 2 == 1


def check_links(root, pages, allow_missing):
    errors = []
    for page in pages:
        rel_page = os.path.relpath(page, root)
        for n, line in prose_lines(open(page, encoding='utf-8').read()):
            for m in LINK.finditer(line):
                if inside_code_span(line, m.start()):
                    continue
                target = m.group(2)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):  # http:, https:, mailto:
                    continue
                path_part, _, anchor = target.partition('#')
                dest = page if not path_part else os.path.normpath(os.path.join(os.path.dirname(page), path_part))
                rel_dest = os.path.relpath(dest, root)
                where = f'{rel_page}:{n}: link {target}'
                if rel_dest.startswith('..'):
                    errors.append(f'{where}: leaves the repository')
                    continue
                if not os.path.exists(dest):
                    if rel_dest in allow_missing:
                        continue
                    errors.append(f'{where}: {rel_dest} does not exist')
                    continue
                if path_part.endswith('/') and not os.path.isdir(dest):
                    errors.append(f'{where}: {rel_dest} is not a folder')
                    continue
                if anchor:
                    if not dest.endswith('.md'):
                        errors.append(f'{where}: an anchor into a file that is not Markdown')
                    elif anchor not in anchors(dest):
                        errors.append(f'{where}: no heading with the anchor #{anchor} in {rel_dest}')
    return errors


def logical_lines(lines):
    """Commands of a shell block: continuation lines joined, prompts and comments dropped. In a
    transcript (a block with `$ ` prompts) only the prompted lines are commands; the rest is output."""
    transcript = any(line.lstrip().startswith('$ ') for line in lines)
    joined, cur = [], ''
    for line in lines:
        s = line.rstrip()
        if transcript and not cur and not s.lstrip().startswith('$ '):
            continue
        if s.endswith('\\'):
            cur += s[:-1] + ' '
            continue
        cur += s
        cur = cur.strip()
        if cur.startswith('$ '):
            cur = cur[2:]
        if cur and not cur.startswith('#'):
            joined.append(cur)
        cur = ''
    return joined


def program_path(build, name):
    """The build's gpucal or bench_* for a command's program name; None for any other program."""
    if name == 'gpucal':
        return os.path.join(build, 'app', 'gpucal')
    if re.fullmatch(r'bench_\w+', name):
        return os.path.join(build, name, name)
    return None


class Programs:
    """The build's programs and their --help texts (asked once each)."""

    def __init__(self, root, build):
        self.root, self.build, self.helps = root, build, {}
        self.gpucal = program_path(build, 'gpucal')

    def help_text(self, argv):
        key = tuple(argv)
        if key not in self.helps:
            r = subprocess.run(argv + ['--help'], capture_output=True, text=True, timeout=60)
            self.helps[key] = r.stdout + r.stderr
        return self.helps[key]

    def verbs(self):
        text = self.help_text([self.gpucal])
        section = text.split('Subcommands:', 1)[1] if 'Subcommands:' in text else ''
        return {line.split()[0] for line in section.splitlines() if line.strip()}


def segments(cmd, variables):
    """The simple commands of one line: $NAME of an earlier NAME=... line expanded, then split
    at ;, &&, || and | (a redirection ends a command's own words)."""
    for name, value in variables.items():
        cmd = re.sub(r'\$\{?' + name + r'\b\}?', lambda _: value, cmd)
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=';&|<>')
    lex.whitespace_split = True
    lex.commenters = '#'
    try:
        tokens = list(lex)
    except ValueError:
        return []
    out, cur, redirected = [], [], False
    for t in tokens:
        if t in (';', '&&', '||', '|', '&'):
            out.append(cur)
            cur, redirected = [], False
        elif set(t) <= set('<>&') or redirected:
            redirected = True
        else:
            cur.append(t)
    out.append(cur)
    return [c for c in out if c]


def split_command(words):
    """The program word and its arguments: environment assignments and an mpirun/srun prefix
    are skipped (the launched program is the first word that names one of ours)."""
    while words and re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', words[0]):
        words = words[1:]
    if words and os.path.basename(words[0]) in ('mpirun', 'mpiexec', 'srun'):
        for i, w in enumerate(words):
            if is_ours(w):
                words = words[i:]
                break
        else:
            return None, []
    if not words:
        return None, []
    if words[0] == 'bash':
        if len(words) > 1 and words[1].startswith('.ci/'):
            return words[1], words[2:]
        return None, []
    if not is_ours(words[0]):
        return None, []
    return words[0], words[1:]


def is_ours(word):
    base = os.path.basename(word)
    return (word in ('gpucal', 'build/app/gpucal') or word.startswith('.ci/')
            or re.fullmatch(r'(build/bench_\w+/)?bench_\w+', word) is not None and base.startswith('bench_'))


def flags_of(args):
    out = []
    for a in args:
        if a.startswith('--') and len(a) > 2 and not a.startswith('--$'):
            out.append(a.split('=', 1)[0])
    return out


def check_commands(root, build, readme):
    errors, checked = [], 0
    progs = Programs(root, build)
    text = open(readme, encoding='utf-8').read()
    for start, info, body in code_blocks(text):
        if info not in SHELL_INFOS:
            continue
        gpu_only = bool(body) and body[0].strip() == GPU_ONLY
        variables = {}
        for line in logical_lines(body):
            m = re.fullmatch(r'([A-Za-z_][A-Za-z0-9_]*)=(.*)', line)
            if m:
                words = shlex.split(m.group(2)) if m.group(2) else ['']
                variables[m.group(1)] = words[0] if len(words) == 1 else m.group(2)
                continue
            for words in segments(line, variables):
                prog, args = split_command(words)
                if prog is None:
                    continue
                cmd = ' '.join(words)
                checked += 1
                where = f'README.md (block at line {start}): {cmd[:90]}'
                if prog.startswith('.ci/'):
                    if not os.path.isfile(os.path.join(root, prog)):
                        errors.append(f'{where}: {prog} does not exist')
                    continue
                if os.path.basename(prog) == 'gpucal':
                    if not os.access(progs.gpucal, os.X_OK):
                        errors.append(f'{where}: {os.path.relpath(progs.gpucal, build)} is not built')
                        continue
                    verb = next((a for a in args if not a.startswith('-')), None)
                    if verb is None or verb not in progs.verbs():
                        errors.append(f'{where}: gpucal has no verb {verb!r} (gpucal --help: {sorted(progs.verbs())})')
                        continue
                    program = [progs.gpucal, verb]
                else:
                    name = os.path.basename(prog)
                    path = program_path(build, name)
                    if not os.access(path, os.X_OK):
                        errors.append(f'{where}: {name} is not built ({os.path.relpath(path, build)})')
                        continue
                    program = [path]
                if gpu_only:
                    continue
                help_text = progs.help_text(program)
                for flag in flags_of(args):
                    if not re.search(re.escape(flag) + r'(?![\w-])', help_text):
                        errors.append(f'{where}: {flag} is not in `{" ".join(os.path.basename(p) for p in program)} --help`')
    return errors, checked


def generated_blocks(text):
    """(marker line number, command, index of the marker line, index of the end line or None) of
    each generated block outside code fences."""
    blocks, open_block = [], None
    for n, line in prose_lines(text):
        m = GENERATED_START.match(line)
        if m:
            if open_block:
                blocks.append(open_block)
            open_block = (n, m.group(1).strip(), n - 1, None)
        elif line.strip() == GENERATED_END and open_block:
            blocks.append(open_block[:3] + (n - 1,))
            open_block = None
    if open_block:
        blocks.append(open_block)
    return blocks


def trimmed(lines):
    """The lines without the blank ones at either end."""
    lines = list(lines)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def generated_output(root, build, cmd):
    """(lines the command prints, None) or (None, why it could not run)."""
    try:
        words = shlex.split(cmd)
    except ValueError as e:
        return None, f'cannot split the command: {e}'
    scratch = None
    if len(words) > 1 and words[0] == 'python3' and re.fullmatch(r'tests/[\w/]+\.py', words[1]):
        # A test script of the tree (a scored comparison): build/app/gpucal is the build's, {tmp}
        # a fresh folder.
        scratch = tempfile.mkdtemp(prefix='check_docs_')
        argv = [sys.executable, os.path.join(root, words[1])] + [
            program_path(build, 'gpucal') if w == 'build/app/gpucal' else w.replace('{tmp}', scratch)
            for w in words[2:]]
    else:
        name = os.path.basename(words[0]) if words else ''
        path = program_path(build, name)
        if path is None:
            return None, 'not a gpucal or bench_* command, or a python3 tests/ script'
        if not os.access(path, os.X_OK):
            return None, f'{os.path.relpath(path, build)} is not built'
        argv = [path] + words[1:]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=root)
    except subprocess.TimeoutExpired:
        return None, 'did not finish in 60 s'
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if r.returncode != 0:
        first = (r.stderr.strip() or r.stdout.strip()).split('\n')[0]
        return None, f'exit {r.returncode}: {first}'
    return trimmed(r.stdout.split('\n')), None


def update_command(root, build):
    here = os.path.relpath(build, root)
    return 'python3 tests/docs/check_docs.py --update' + ('' if here == 'build' else f' --build {build}')


def first_difference(have, want):
    """(index of the first line that differs, what differs there, from just before it)."""
    for i in range(max(len(have), len(want))):
        a = have[i] if i < len(have) else '(nothing)'
        b = want[i] if i < len(want) else '(nothing)'
        if a != b:
            j = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            cut = max(0, j - 20)
            return i, f'reads {a[cut:j + 40]!r}, the command prints {b[cut:j + 40]!r}'
    return 0, ''


def check_generated(root, build, pages, update=False):
    """Problems with the generated blocks (or, with update, the blocks rewritten) and how many."""
    errors, seen, changed = [], 0, []
    for page in pages:
        rel_page = os.path.relpath(page, root)
        lines = open(page, encoding='utf-8').read().split('\n')
        new_lines, done = [], 0
        for n, cmd, start, end in generated_blocks('\n'.join(lines)):
            seen += 1
            where = f'{rel_page}:{n}: `{cmd}`'
            if end is None:
                errors.append(f'{where}: no {GENERATED_END} after it')
                continue
            output, why = generated_output(root, build, cmd)
            if output is None:
                errors.append(f'{where}: {why}')
                continue
            body = lines[start + 1:end]
            have = trimmed(body)
            new_lines += lines[done:start + 1] + [''] + output + ['']
            done = end
            if have != output:
                if update:
                    changed.append(where)
                else:
                    i, what = first_difference(have, output)
                    lead = next((k for k, text in enumerate(body) if text.strip()), 0)
                    line = start + 2 + lead + i  # the page's line number of have[i]
                    errors.append(f'{where}: the generated block is not the command\'s output (line {line} {what}); '
                                  f'fix: {update_command(root, build)}')
        if update and done:
            text = '\n'.join(new_lines + lines[done:])
            if text != '\n'.join(lines):
                with open(page, 'w', encoding='utf-8') as f:
                    f.write(text)
    return errors, seen, changed


def update_main(root, build, pages):
    errors, seen, changed = check_generated(root, build, pages, update=True)
    for c in changed:
        print(f'updated {c}')
    for e in errors:
        print(e)
    print(f'{seen} generated block(s), {len(changed)} rewritten' + (f'; {len(errors)} problem(s)' if errors else ''))
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument('--build')
    ap.add_argument('--allow-missing', action='append', default=[])
    ap.add_argument('--update', action='store_true', help='rewrite the generated blocks from their commands')
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build or os.path.join(root, 'build'))
    readme = os.path.join(root, 'README.md')
    if not os.path.isfile(readme):
        print(f'no README.md in {root}: not a source tree (a relocated build?); skipped')
        return 77
    pages = [readme] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
    if a.update:
        return update_main(root, build, pages)
    errors = check_links(root, pages, set(a.allow_missing))
    gen_errors, generated, _ = check_generated(root, build, pages)
    errors += gen_errors
    text = open(readme, encoding='utf-8').read()
    n_lines = text.count('\n') + (0 if text.endswith('\n') or not text else 1)  # as wc -l, plus a last line
    if n_lines > README_MAX_LINES:
        errors.append(f'README.md: {n_lines} lines, more than {README_MAX_LINES}: move the detail into docs/')
    cmd_errors, checked = check_commands(root, build, readme)
    errors += cmd_errors
    if checked == 0:
        errors.append('README.md: no gpucal, bench or .ci command found in its shell blocks')
    for e in errors:
        print(e)
    absent = [p for p in a.allow_missing if not os.path.exists(os.path.join(root, p))]
    print(f'{len(pages)} pages, README {n_lines} lines, {checked} commands checked, {generated} generated blocks'
          + (f'; not yet written: {", ".join(absent)}' if absent else '')
          + (f'; {len(errors)} problem(s)' if errors else '; ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
