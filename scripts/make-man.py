#!/usr/bin/env python3
"""Writes announce(1) to stdout: man/announce.1.in (written by hand) with the COMMANDS
section generated from what the parser knows (`announce --experimental-dump-help`), so the
page's commands and options are always the binary's own.

    scripts/make-man.py path/to/announce > announce.1

The date is SOURCE_DATE_EPOCH's when set (reproducible builds), else today's.
"""
import json, os, re, subprocess, sys, time

def roff(text):
    """Plain text as roff: escapes, option dashes as \\-, non-ASCII as \\[uXXXX]."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])-(?=[\w-])", r"\\-", text)  # -q, --device, -1: minus, not hyphen
    out = []
    for ch in text:
        out.append(ch if ord(ch) < 128 else "\\[u%04X]" % ord(ch))
    text = "".join(out)
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)

def names(arg):
    parts = []
    for n in arg.get("names", []):
        parts.append(("\\-" if n["kind"] == "short" else "\\-\\-") + roff(n["name"]))
    return ", ".join(r"\fB%s\fR" % p for p in parts)

def synopsis_of(arg):
    if arg["kind"] == "positional":
        text = r"\fI%s\fR" % roff(arg["valueName"].upper())
        return text + ("..." if arg.get("isRepeating") else "")
    name = arg.get("preferredName") or arg["names"][0]
    flag = ("\\-" if name["kind"] == "short" else "\\-\\-") + roff(name["name"])
    return r"\fB%s\fR" % flag + ("" if arg["kind"] == "flag" else r" \fI%s\fR" % roff(arg["valueName"]))

def discussion(text):
    """The command's discussion without the parts the page has sections for."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text or "") if p.strip()]
    keep = [p for p in paragraphs if not re.match(r"\s*(EXAMPLES|EXIT STATUS|Exit status:)", p)]
    out = []
    for p in keep:
        out.append(".PP\n" + roff(" ".join(line.strip() for line in p.splitlines())))
    return "\n".join(out)

def command_section(command):
    shown = [a for a in command.get("arguments", []) if a.get("shouldDisplay", True)
             and not any(n["name"] in ("help", "version") for n in a.get("names", []))]
    options = [a for a in shown if a["kind"] != "positional"]
    positionals = [a for a in shown if a["kind"] == "positional"]
    lines = [".SS %s" % roff(command["commandName"])]
    usage = r"\fBannounce %s\fR" % roff(command["commandName"])
    if options:
        usage += r" [\fIoptions\fR]"
    for p in positionals:
        usage += " " + (synopsis_of(p) if not p.get("isOptional") else "[%s]" % synopsis_of(p))
    lines += [".PP", usage, ".PP", roff(command.get("abstract", ""))]
    disc = discussion(command.get("discussion"))
    if disc:
        lines.append(disc)
    for a in positionals + options:
        lines.append(".TP")
        if a["kind"] == "positional":
            lines.append(synopsis_of(a))
        else:
            value = "" if a["kind"] == "flag" else r" \fI%s\fR" % roff(a["valueName"])
            lines.append(names(a) + value)
        abstract = roff(a.get("abstract", ""))
        if a.get("allValues"):
            abstract += " One of: " + ", ".join(r"\fB%s\fR" % roff(v) for v in a["allValues"]) + "."
        if a.get("defaultValue") not in (None, "", "false"):
            abstract += " Default: %s." % roff(a["defaultValue"])
        lines.append(abstract)
    return "\n".join(lines)

def main():
    binary = sys.argv[1]
    template = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "man", "announce.1.in")
    tool = json.loads(subprocess.run([binary, "--experimental-dump-help"], check=True, capture_output=True, text=True).stdout)
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    date = time.strftime("%Y-%m-%d", time.gmtime(epoch))
    commands = [c for c in tool["command"].get("subcommands", []) if c.get("shouldDisplay", True)]
    page = open(template, encoding="utf-8").read()
    page = page.replace("@VERSION@", version).replace("@DATE@", date)
    page = page.replace("@COMMANDS@", "\n".join(command_section(c) for c in commands))
    sys.stdout.write(page)

main()
