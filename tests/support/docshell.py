"""Run a document's shell blocks in a scratch root, so a doc that drifts from the code fails.

A Markdown file's fenced blocks (```` ```sh ````) are taken in order, each run as one bash
script (``set -e``: a failing command fails the block, naming the document's line). Before
that every command is rewritten for the scratch root:

* the paths of an install (``/etc/ms4watch``, ``/var/lib/ms4watch``, ``/etc/mosquitto``, …)
  become folders under the root (:attr:`Scratch.paths`), ``/opt/ms4watch/venv/bin/ms4watch``
  this checkout's own ``ms4watch`` and ``/opt/ms4watch`` the checkout;
* ``sudo`` and ``sudo -u ms4watch`` are dropped (the test's own user runs everything) and
  the owners and groups an install gives (``-o ms4watch``, ``chgrp ms4watch``) become that
  user's, so modes are still applied;
* host names and ports become the test's servers (:attr:`Scratch.hosts`);
* a command matching a :class:`Skip` is not run, and is listed with its reason;
  one matching a :class:`Rewrite` runs rewritten, listed with its reason.

A command that still names an absolute system path after all that is refused before
anything runs: the test never writes outside its root.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
SYSTEM_PATH = re.compile(r"(?<![\w/.$-])/(?:etc|var|opt|root|usr|srv|home|run)/")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int            # the document's line of the block's first line (1-based)
    lang: str
    text: str
    section: str         # the nearest "## " heading above it
    subsection: str      # the nearest "### " heading since that one, or ""


def blocks(doc: Path, lang: str | None = "sh") -> list[Block]:
    """The fenced blocks of ``doc`` (of language ``lang``; None: all), in order."""
    out: list[Block] = []
    section = subsection = ""
    body: list[str] | None = None
    start = 0
    this_lang = ""
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if body is None:
            if line.startswith("## "):
                section, subsection = line[3:].strip(), ""
            elif line.startswith("### "):
                subsection = line[4:].strip()
            m = FENCE.match(line)
            if m:
                body, start, this_lang = [], n + 1, m.group(1)
        elif line.startswith("```"):
            if lang is None or this_lang == lang:
                out.append(Block(doc, start, this_lang, "\n".join(body), section, subsection))
            body = None
        else:
            body.append(line)
    return out


@dataclass(frozen=True)
class Skip:
    """A command not run: ``pattern`` (a regex searched in the command) and why."""
    pattern: str
    reason: str


@dataclass(frozen=True)
class Rewrite:
    """A command run otherwise: ``pattern`` replaced by ``replacement`` (``re.sub``), and why."""
    pattern: str
    replacement: str
    reason: str


@dataclass
class Scratch:
    root: Path
    bin_dir: Path                        # where this checkout's ``ms4watch`` is
    repo: Path
    hosts: dict[str, str] = field(default_factory=dict)    # "broker.town.example" -> "localhost", …
    skips: list[Skip] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    done: list[tuple[str, int, str, str]] = field(default_factory=list)   # (doc, line, command, why) skipped/rewritten

    @property
    def paths(self) -> list[tuple[str, str]]:
        r = self.root
        return [("/opt/ms4watch/venv/bin/ms4watch", str(self.bin_dir / "ms4watch")),
                ("/opt/ms4watch/venv/lib/python3*/site-packages/ms4watch", str(self.repo / "ms4watch")),
                ("/opt/ms4watch", str(self.repo)),
                ("/usr/share/ms4watch/docs", str(self.repo / "docs")),
                *[(p, f"{r}{p}") for p in ("/etc/ms4watch", "/etc/mosquitto", "/etc/systemd", "/etc/nginx",
                                           "/var/lib/ms4watch", "/var/backups", "/root")]]

    def translate(self, text: str) -> str:
        """A command or a file's text with the scratch root's paths, hosts, user and group."""
        import grp
        import pwd
        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(os.getgid()).gr_name
        text = re.sub(r"\bsudo -u ms4watch ", "", text)
        text = re.sub(r"\bsudo (?!-)", "", text)
        text = re.sub(r"(\binstall\b[^\n]*?) -o (?:root|ms4watch)\b", rf"\1 -o {user}", text)
        text = re.sub(r"(\binstall\b[^\n]*?) -g (?:root|ms4watch|mosquitto)\b", rf"\1 -g {group}", text)
        text = re.sub(r"\bchgrp ms4watch\b", f"chgrp {group}", text)
        for old, new in self.paths:
            text = re.sub(rf"(?<![\w.-]){re.escape(old)}(?=[/\s'\":]|$)", new, text, flags=re.M)
        for old, new in self.hosts.items():
            text = text.replace(old, new)
        return text

    def script(self, block: Block) -> str:
        """The block as a bash script whose line N is the document's line N."""
        lines = block.text.split("\n")
        commands: list[tuple[int, int]] = []          # (first, last) index of each logical command
        i = 0
        while i < len(lines):
            j = i
            while lines[j].rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
            commands.append((i, j))
            i = j + 1
        out = list(lines)
        for a, b in commands:
            command = "\n".join(lines[a:b + 1])
            if not command.strip() or command.strip().startswith("#"):
                continue
            where = block.line + a
            skip = next((s for s in self.skips if re.search(s.pattern, command)), None)
            if skip is not None:
                self.done.append((block.doc.name, where, command.strip(), f"skipped: {skip.reason}"))
                out[a:b + 1] = [":"] + [""] * (b - a)
                continue
            for rw in self.rewrites:
                if re.search(rw.pattern, command):
                    command = re.sub(rw.pattern, rw.replacement, command)
                    self.done.append((block.doc.name, where, command.strip(), f"rewritten: {rw.reason}"))
            translated = self.translate(command)
            left = SYSTEM_PATH.search(translated)
            if left:
                raise AssertionError(f"{block.doc.name}:{where}: {command.strip()!r} still names a system path "
                                     f"({left.group(0)}…) in the scratch root: add it to Scratch.paths or a Skip")
            parts = translated.split("\n")
            parts += [""] * (b - a + 1 - len(parts))
            out[a:b + 1] = parts
        header = ["set -eE -o pipefail",
                  f"trap 'echo \"{block.doc.name}:$LINENO: exit $?: $BASH_COMMAND\" >&2' ERR"]
        pad = block.line - 1 - len(header)
        assert pad >= 0, f"{block.doc.name}:{block.line}: a block this near the top cannot keep its line numbers"
        return "\n".join(header + [""] * pad + out) + "\n"

    def run(self, block: Block, cwd: Path, timeout_s: float = 300) -> subprocess.CompletedProcess:
        path = cwd / f".{block.doc.stem}-{block.line}.sh"
        path.write_text(self.script(block))
        env = {**os.environ, **self.env, "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        return subprocess.run(["bash", str(path)], cwd=cwd, env=env, input=self.stdin, capture_output=True,
                              text=True, timeout=timeout_s)


def mosquitto_main(root: str, port: str) -> None:
    """``python -m tests.support.docshell mosquitto ROOT PORT``: (re)start the scratch root's
    Mosquitto as Debian's unit would (its ``mosquitto.conf`` including ``conf.d``), in the
    background, and wait until it listens; its pid in ``ROOT/run/mosquitto.pid``."""
    import signal
    import time

    from tests.support.servers import wait_port
    pidfile = Path(root) / "run" / "mosquitto.pid"
    if pidfile.exists():
        try:
            os.kill(int(pidfile.read_text()), signal.SIGTERM)
            for _ in range(100):
                os.kill(int(pidfile.read_text()), 0)
                time.sleep(0.1)
        except ProcessLookupError:
            pass
    log = open(Path(root) / "run" / "mosquitto.log", "ab")
    proc = subprocess.Popen(["mosquitto", "-c", f"{root}/etc/mosquitto/mosquitto.conf"], stdout=log, stderr=log,
                            start_new_session=True)
    pidfile.write_text(str(proc.pid))
    wait_port(int(port), proc=proc)


if __name__ == "__main__":
    if sys.argv[1:2] == ["mosquitto"]:
        mosquitto_main(*sys.argv[2:4])
    else:
        raise SystemExit(f"usage: {sys.argv[0]} mosquitto ROOT PORT")
