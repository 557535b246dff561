#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Docs that cannot lie: runs every command and compiles every snippet the docs show.

What is checked:
  - every ```sh / ```bash / ```shell block of README.md and docs/**/*.md runs, from a scratch
    directory that looks like the source tree with the build directory at `build/`
    (bash -eo pipefail, bounded by a timeout; paths under /tmp/ are rewritten to a directory
    of the run, so concurrent runs do not share a socket);
  - every example launch line of every element: those gst-inspect-1.0 shows (the element's
    description) and those of the element doc blocks in gst/elements/*.cpp (|[ ... ]|); an
    example of tensoripcsrc, which needs a sender, runs against a bounded tensoripcsink;
  - every ```python block is valid Python (the whole examples run in suite python);
  - every ```c / ```cpp block compiles against the headers and pkg-config files of a staged
    `meson install`, as a user of the installed package would build it;

A block is told apart by an HTML comment on the line(s) just before its fence:
  <!-- docs-check: skip REASON -->     not run; the reason is printed (and required)
  <!-- docs-check: vm -->              needs a camera or DMA-BUF: runs in the VM lane only
  <!-- docs-check: timeout=N -->       seconds before the block counts as hung (default 120)
  <!-- docs-check: fragment -->        C/C++: statements, compiled inside a function; lines
                                       starting with #include or `using` stay at file scope
  <!-- docs-check: given=DECLS -->     C/C++ fragment: declarations the text leaves implied
Several directives may share one comment, separated by ";" (`skip` and `given` take the rest
of the comment, semicolons included, so they come last).

  check_docs.py --source-root SRC --build-dir BUILD [--mode host|vm] [--list]
  check_docs.py --self-test ...        proves the checker fails on a broken command/snippet

The last line is "N passed, N failed, N skipped". Exit status 1 when anything failed.
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"sh", "bash", "shell"}
PYTHON_LANGS = {"python", "py"}
C_LANGS = {"c": "c", "cpp": "c++", "c++": "c++"}
DIRECTIVE = re.compile(r"<!--\s*docs-check:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9+_-]*)\s*(.*)$")


class Block:
    def __init__(self, where, lang, text, directives):
        self.where = where  # "file:line"
        self.lang = lang
        self.text = text
        self.skip = None
        self.vm = False
        self.timeout = 120
        self.fragment = False
        self.given = ""
        for d in directives:
            parts = d.split(";")
            while parts:
                part = parts.pop(0).strip()
                if not part:
                    continue
                m = re.match(r"([a-z][a-z-]*)\s*(?:=\s*(.*)|\s+(.*))?$", part)
                if not m:
                    raise ValueError(f"{where}: cannot read docs-check directive '{part}'")
                key, value = m.group(1), (m.group(2) or m.group(3) or "").strip()
                if key in ("skip", "given") and parts:
                    # A reason or C declarations may contain ";": they take the rest.
                    value = ";".join([value] + parts).strip()
                    parts = []
                if key == "skip":
                    self.skip = value.strip() or "(no reason given)"
                elif key == "vm":
                    self.vm = True
                elif key == "timeout":
                    self.timeout = int(value)
                elif key == "fragment":
                    self.fragment = True
                elif key == "given":
                    self.given = value
                else:
                    raise ValueError(f"{where}: unknown docs-check directive '{key}'")


def markdown_blocks(path, rel):
    blocks = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, _ = m.groups()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        directives = []
        j = start - 1
        while j >= 0 and DIRECTIVE.search(lines[j]):
            directives.insert(0, DIRECTIVE.search(lines[j]).group(1))
            j -= 1
        lang = lang.lower()
        if lang in SHELL_LANGS or lang in C_LANGS or lang in PYTHON_LANGS:
            blocks.append(Block(f"{rel}:{start + 1}", lang, "\n".join(body) + "\n", directives))
        elif directives:
            raise ValueError(f"{rel}:{start + 1}: docs-check directive on a ```{lang} block")
    return blocks


def launch_lines(text):
    """Splits doc-block text into gst-launch-1.0 command lines (continuations joined)."""
    cmds = []
    for raw in text.split("\n"):
        line = raw.strip().lstrip("*").strip()
        if not line:
            continue
        if line.startswith("gst-launch-1.0"):
            cmds.append(line)
        elif cmds:
            cmds[-1] += " " + line
    return [c.replace("\\ ", " ") for c in cmds]


def source_doc_blocks(src):
    blocks = []
    for path in sorted(glob.glob(os.path.join(src, "gst", "elements", "*.cpp"))):
        rel = os.path.relpath(path, src)
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"\|\[(.*?)\]\|", text, re.S):
            line = text.count("\n", 0, m.start()) + 1
            for cmd in launch_lines(m.group(1)):
                blocks.append(element_block(f"{rel}:{line} (doc block)", cmd))
    return blocks


def element_block(where, cmd):
    b = Block(where, "sh", with_ipc_sender(cmd + "\n"), [])
    if re.search(r"\bv4l2src\b|/dev/video", cmd):
        b.vm = True
    # tensorinfer's examples name a user's model (ssd.onnx, ...), which no build has: the lanes
    # run the element on models made at test time (gst-tensorinfer, gst-tensorinfer-decoders).
    m = re.search(r"\btensorinfer\b[^!]*?\bmodel=(\S+)", cmd)
    if m and not os.path.isabs(m.group(1)):
        b.skip = (f"names the user's model {m.group(1)}; tensorinfer runs on models made at "
                  "test time in gst-tensorinfer and gst-tensorinfer-decoders")
    return b


def inspect_blocks(env):
    out = subprocess.run(["gst-inspect-1.0", "edgetensor"], env=env, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"gst-inspect-1.0 edgetensor failed: {out.stderr.strip()}")
    names = re.findall(r"^\s+(\w+):\s", out.stdout, re.M)
    blocks = []
    for name in names:
        info = subprocess.run(["gst-inspect-1.0", name], env=env, capture_output=True,
                              text=True, timeout=60)
        desc = re.search(r"^\s*Description\s+(.*)$", info.stdout, re.M)
        if not desc:
            continue
        for cmd in re.findall(r"(gst-launch-1\.0 [^\n]*?)(?=(?:\s+gst-launch-1\.0 )|$)",
                              desc.group(1)):
            blocks.append(element_block(f"gst-inspect-1.0 {name} (description)",
                                        cmd.strip().rstrip(".")))
    if not blocks:
        raise RuntimeError("no element shows an example launch line in gst-inspect-1.0")
    return blocks


def scratch_tree(src, build):
    """A directory whose entries are the source tree's, with `build` -> the build directory."""
    d = tempfile.mkdtemp(prefix="docs-check-")
    for entry in os.listdir(src):
        if entry in ("build", ".git"):
            continue
        os.symlink(os.path.join(src, entry), os.path.join(d, entry))
    os.symlink(build, os.path.join(d, "build"))
    return d


def staged_install(build):
    """`meson install` into a staging directory; returns it and a directory of our .pc files
    with their prefix pointing into it (system packages' .pc files stay as they are)."""
    dest = tempfile.mkdtemp(prefix="docs-install-")
    r = subprocess.run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild",
                        "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"meson install failed: {r.stderr.strip()}")
    pcdir = os.path.join(dest, "docs-check-pkgconfig")
    os.makedirs(pcdir)
    for pc in glob.glob(f"{dest}/**/pkgconfig/*.pc", recursive=True):
        text = open(pc).read()
        text = re.sub(r"^prefix=(.*)$", lambda m: "prefix=" + dest + m.group(1), text, count=1,
                      flags=re.M)
        with open(os.path.join(pcdir, os.path.basename(pc)), "w") as f:
            f.write(text)
    return dest, [pcdir]


def c_source(block):
    if not block.fragment:
        return block.text
    top, body = [], []
    for line in block.text.split("\n"):
        (top if re.match(r"^\s*(#include|using\s)", line) else body).append(line)
    lang = C_LANGS[block.lang]
    head = "[[maybe_unused]] static int docs_snippet()" if lang == "c++" else \
        "__attribute__((unused)) static int docs_snippet(void)"
    given = block.given.replace(";", ";\n    ") if block.given else ""
    return "\n".join(top) + f"\n{head}\n{{\n    {given}\n" + "\n".join(body) + \
        "\n    return 0;\n}\n"


def compile_block(block, install, workdir):
    dest, pcs = install
    lang = C_LANGS[block.lang]
    ext = ".c" if lang == "c" else ".cpp"
    path = os.path.join(workdir, "snippet" + ext)
    with open(path, "w") as f:
        f.write(c_source(block))
    env = dict(os.environ, PKG_CONFIG_PATH=":".join(pcs))
    pkgs = ["edgetensor"]
    if "gst/" in block.text or "gst_" in block.text:
        pkgs.append("gstreamer-edgetensor-1.0")
    flags = subprocess.run(["pkg-config", "--cflags"] + pkgs, env=env, capture_output=True,
                           text=True)
    if flags.returncode != 0:
        return False, flags.stderr
    std = ["-std=c11"] if lang == "c" else ["-std=c++20"]
    cc = "cc" if lang == "c" else "c++"
    r = subprocess.run([cc] + std + ["-Wall", "-Werror", "-c", "-o", os.devnull, path] +
                       flags.stdout.split(), capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr + "\n--- source ---\n" + c_source(block))


# Commands that would build, install packages or run the suites this checker is part of: the
# README's set-up commands and the like. They must carry a skip with the reason (CI runs them as
# its own lanes); running them here would reconfigure the build under test.
BUILDS_THE_PROJECT = re.compile(r"\b(meson\s+(setup|configure|compile|test|install)|tools/dev\.sh|"
                                r"apt-get|ninja)\b")


def python_block(block, workdir):
    """Python snippets are fragments of examples/python (which runs whole in suite python):
    they must at least be valid Python."""
    path = os.path.join(workdir, "snippet.py")
    with open(path, "w") as f:
        f.write(block.text)
    r = subprocess.run(["/usr/bin/python3", "-m", "py_compile", path], capture_output=True,
                       text=True)
    return r.returncode == 0, r.stdout + r.stderr


# tensoripcsrc cannot run without a sender: an element example that receives and sends nothing
# itself runs against this bounded sender, started first on the same socket.
IPC_SENDER = ("gst-launch-1.0 -q tensortestsrc num-buffers=120 ! "
              "video/x-raw,format=NV12,width=640,height=480,framerate=30/1 ! "
              "tensoripcsink socket-path={path} wait-for-connection=true")


def with_ipc_sender(text):
    if "tensoripcsrc" not in text or "tensoripcsink" in text:
        return text
    m = re.search(r"tensoripcsrc[^!]*?socket-path=(\S+)", text)
    if not m:
        return text
    return (f"{IPC_SENDER.format(path=m.group(1))} &\nsender=$!\n{text.strip()}\n"
            "wait $sender\n")


def run_block(block, workdir, env):
    if BUILDS_THE_PROJECT.search(block.text):
        return False, ("this block builds, installs or runs the test suites; mark it "
                       "<!-- docs-check: skip REASON --> (CI runs such commands as lanes)")
    # Paths under /tmp (socket paths, output files) go to a directory of this run, so two
    # runs of the checker, or a user's own pipeline, never meet on /tmp/cam.sock.
    private_tmp = os.path.join(workdir, ".tmp")
    os.makedirs(private_tmp, exist_ok=True)
    text = re.sub(r"(?<![\w.])/tmp/", private_tmp + "/", block.text)
    # A session of its own, so a hung block is killed with everything it started: a
    # gst-launch-1.0 left behind would keep its camera open and fail the blocks after it.
    p = subprocess.Popen(["bash", "-eo", "pipefail", "-c", text], cwd=workdir, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=block.timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return False, f"still running after {block.timeout} s (a launch line without " \
                      f"num-buffers?)\n{(out + err)[-3000:]}"
    return p.returncode == 0, f"exit status {p.returncode}\n{(out + err)[-3000:]}"


def collect(src, env, with_inspect=True, files=None):
    blocks = []
    if files is None:
        files = [os.path.join(src, "README.md")] + sorted(
            glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
    for path in files:
        blocks += markdown_blocks(path, os.path.relpath(path, src))
    if with_inspect:
        blocks += source_doc_blocks(src)
        blocks += inspect_blocks(env)
    return blocks


def check(blocks, src, build, mode, env, list_only=False):
    passed = failed = skipped = 0
    workdir = scratch_tree(src, build)
    install = None
    try:
        for b in blocks:
            first = b.text.strip().split("\n")[0][:90]
            if b.skip:
                print(f"SKIP {b.where}: {first}\n     reason: {b.skip}")
                skipped += 1
                continue
            if b.vm != (mode == "vm"):
                print(f"SKIP {b.where}: {first}\n     reason: runs in the "
                      f"{'VM lane' if b.vm else 'host run'}")
                skipped += 1
                continue
            if list_only:
                print(f"WOULD RUN {b.where}: {first}")
                continue
            started = time.monotonic()
            if b.lang in PYTHON_LANGS:
                ok, log = python_block(b, workdir)
            elif b.lang in C_LANGS:
                if install is None:
                    install = staged_install(build)
                ok, log = compile_block(b, install, workdir)
            else:
                ok, log = run_block(b, workdir, env)
            # The time beside each block: the VM lane's share of CI is mostly these blocks.
            took = f"({time.monotonic() - started:.1f} s)"
            if ok:
                print(f"PASS {b.where} {took}: {first}")
                passed += 1
            else:
                print(f"FAIL {b.where} {took}: {first}\n" + "\n".join("     " + line for line in
                                                               log.strip().split("\n")))
                failed += 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if install:
            shutil.rmtree(install[0], ignore_errors=True)
    return passed, failed, skipped


def self_test(src, build, env):
    """The checker must fail a broken command and a broken snippet, and pass good ones."""
    d = tempfile.mkdtemp(prefix="docs-selftest-")
    try:
        good = os.path.join(d, "good.md")
        bad = os.path.join(d, "bad.md")
        # Named through the environment: the checker rewrites every /tmp/ path a block spells
        # out (and the build directory itself may lie under /tmp).
        pidfile = os.path.join(d, "hung-child.pid")
        with open(good, "w") as f:
            f.write("```sh\ngst-launch-1.0 -q tensortestsrc num-buffers=2 ! fakesink\n```\n\n"
                    "<!-- docs-check: fragment -->\n```cpp\n#include <edgetensor/tensor.hpp>\n"
                    "auto t = edgetensor::Tensor<uint8_t>::create({4});\n(void)t;\n```\n")
        with open(bad, "w") as f:
            f.write("```sh\ngst-launch-1.0 -q tensortestsrc num-buffers=2 ! no-such-element ! "
                    "fakesink\n```\n\n"
                    "```sh\ngst-launch-1.0 -q tensortestsrc num-buffers=2 !\n"
                    "    fakesink\n```\n\n"
                    "<!-- docs-check: fragment -->\n```cpp\n#include <edgetensor/tensor.hpp>\n"
                    "auto t = edgetensor::Tensor<uint8_t>::no_such_function({4});\n```\n\n"
                    # A hung block: it fails, and what it started dies with it.
                    "<!-- docs-check: timeout=3 -->\n```sh\nsleep 600 &\n"
                    'echo $! > "$DOCS_SELFTEST_PIDFILE"\nwait\n```\n')
        g = check(collect(src, env, False, [good]), src, build, "host", env)
        bad_env = dict(env, DOCS_SELFTEST_PIDFILE=pidfile)
        b = check(collect(src, bad_env, False, [bad]), src, build, "host", bad_env)
        left = process_alive(pidfile)
        ok = g == (2, 0, 0) and b == (0, 4, 0) and not left
        print(f"self-test: good doc {g}, broken doc {b}"
              f"{', a hung block left its child running' if left else ''}: "
              f"{'the checker tells them apart' if ok else 'WRONG'}")
        return ok
    finally:
        shutil.rmtree(d, ignore_errors=True)


def process_alive(pidfile):
    """True when the pid in pidfile names a process that is still running (not a zombie)."""
    try:
        with open(pidfile) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return True  # the block never ran: the test cannot tell
    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.1)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--mode", choices=["host", "vm"], default="host")
    ap.add_argument("--list", action="store_true", help="print what would run")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    src = os.path.abspath(args.source_root)
    build = os.path.abspath(args.build_dir)

    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = os.path.join(build, "gst")
    env["GST_PLUGIN_PATH_1_0"] = env["GST_PLUGIN_PATH"]
    env.pop("GST_PLUGIN_SYSTEM_PATH_1_0", None)  # docs use the system's stock elements too
    env.pop("GST_PLUGIN_SYSTEM_PATH", None)
    reg = tempfile.NamedTemporaryFile(prefix="docs-registry-", suffix=".bin", delete=False)
    reg.close()
    env["GST_REGISTRY"] = env["GST_REGISTRY_1_0"] = reg.name
    try:
        if args.self_test:
            ok = self_test(src, build, env)
            print(f"{1 if ok else 0} passed, {0 if ok else 1} failed, 0 skipped")
            return 0 if ok else 1
        blocks = collect(src, env)
        p, f, s = check(blocks, src, build, args.mode, env, args.list)
        print(f"{p} passed, {f} failed, {s} skipped")
        return 1 if f else 0
    finally:
        os.unlink(reg.name)


if __name__ == "__main__":
    sys.exit(main())
