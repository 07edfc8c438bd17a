#!/usr/bin/env python3
"""Checks every relative link in the repository's Markdown files.

    python3 scripts/check-links.py ROOT

Walks ROOT for *.md files (skipping .git, build directories and node_modules) and checks each
relative link in them: inline links and images ([text](target), ![alt](target)), reference
definitions ([label]: target) and the href/src of HTML tags. A link resolves when its target
exists (a file or a folder) inside ROOT; a link with a #anchor into a Markdown file (or a bare
#anchor into the same file) resolves only when that file has a heading whose GitHub anchor is
the fragment (lowercased, punctuation removed, spaces as hyphens, repeated headings numbered
-1, -2, ...), or an explicit <a name=...>/<a id=...>. Links with a scheme (https:, mailto:, ...)
are not checked; neither is what stands in code spans or fenced code blocks.

Prints each broken link as `file:line: link -> reason` and exits 1 if any is broken, else 0
(2 on bad usage). Standard library only.
"""

import os
import re
import sys
import unicodedata
import urllib.parse

SKIPPED_DIRECTORIES = {".git", "build", "node_modules"}
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[([^\]^][^\]]*)\]:[ \t]*(<[^>]*>|\S+)")  # not footnotes ([^1]:)
HTML_LINK = re.compile(r"<(?:a|img|source)\b[^>]*?\b(?:href|src)\s*=\s*(\"[^\"]*\"|'[^']*')", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:name|id)\s*=\s*(\"[^\"]*\"|'[^']*')", re.IGNORECASE)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
GITHUB_LINE_ANCHOR = re.compile(r"^L\d+(C\d+)?(-L\d+(C\d+)?)?$")


def markdown_files(root):
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories
                                   if d not in SKIPPED_DIRECTORIES and not d.startswith("build-"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(directory, name)


def blank_out(text, start, end):
    """Replaces text[start:end] with spaces, keeping newlines, so that offsets and lines stay."""
    return text[:start] + "".join("\n" if c == "\n" else " " for c in text[start:end]) + text[end:]


def mask_code(text):
    """The text with fenced code blocks, code spans and HTML comments blanked out.

    Returns (masked text, the lines that are inside fenced code blocks)."""
    lines = text.split("\n")
    in_fence = None
    fenced = set()
    for number, line in enumerate(lines):
        match = FENCE.match(line)
        if in_fence is None:
            if match:
                in_fence = match.group(1)
                fenced.add(number)
        else:
            fenced.add(number)
            if match and match.group(1)[0] == in_fence[0] and len(match.group(1)) >= len(in_fence) \
                    and line.strip() == match.group(1):
                in_fence = None
    masked = "\n".join(" " * len(line) if number in fenced else line for number, line in enumerate(lines))
    for match in HTML_COMMENT.finditer(masked):
        masked = blank_out(masked, match.start(), match.end())
    # Code spans: a run of backticks up to the next run of the same length within the paragraph.
    position = 0
    while True:
        opening = re.compile(r"(?<!`)(`+)(?!`)").search(masked, position)
        if not opening:
            break
        run = opening.group(1)
        paragraph_end = re.compile(r"\n[ \t]*\n").search(masked, opening.end())
        limit = paragraph_end.start() if paragraph_end else len(masked)
        closing = re.compile("(?<!`)" + run + "(?!`)").search(masked, opening.end(), limit)
        if not closing:
            position = opening.end()
            continue
        masked = blank_out(masked, opening.start(), closing.end())
        position = closing.end()
    return masked, fenced


def github_anchor(heading):
    """The anchor GitHub gives a heading: its text as rendered, lowercased, without punctuation."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(?<![\w\\])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w])", r"\2", text)  # emphasis
    kept = []
    for character in text.lower():
        category = unicodedata.category(character)
        if character in " -_" or category[0] in "LMN" or category == "Pc":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


def anchors_of(path, cache):
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8", errors="replace") as file:
        text = file.read()
    masked, fenced = mask_code(text)
    lines = text.split("\n")
    headings = []
    previous_paragraph_line = None
    for number, line in enumerate(lines):
        if number in fenced:
            previous_paragraph_line = None
            continue
        atx = ATX_HEADING.match(line)
        if atx:
            content = re.sub(r"[ \t]+#+[ \t]*$", "", atx.group(2) or "")
            content = "" if re.fullmatch(r"#+", content) else content
            headings.append(content.strip())
            previous_paragraph_line = None
            continue
        if SETEXT_UNDERLINE.match(line) and previous_paragraph_line is not None:
            # A "---" under a list item or a table is not a heading underline; "===" or "---" under a paragraph is.
            if not re.match(r"^\s*([-*+]|\d+[.)])\s|^\s*\|", previous_paragraph_line):
                headings.append(previous_paragraph_line.strip())
            previous_paragraph_line = None
            continue
        previous_paragraph_line = line if line.strip() and not line.startswith("    ") else None
    anchors = set()
    counts = {}
    for heading in headings:
        anchor = github_anchor(heading)
        count = counts.get(anchor, 0)
        counts[anchor] = count + 1
        anchors.add(anchor if count == 0 else "%s-%d" % (anchor, count))
    for match in HTML_ANCHOR.finditer(masked):
        anchors.add(match.group(1)[1:-1])
    cache[path] = anchors
    return anchors


def link_destinations(masked):
    """Yields (offset, destination) for every inline link or image in the masked text."""
    position = 0
    while True:
        start = masked.find("](", position)
        if start < 0:
            return
        position = start + 2
        # The link text must open on the same line, brackets balanced.
        depth = 0
        index = start
        opened = False
        while index >= 0 and masked[index] != "\n":
            if masked[index] == "]" and (index == 0 or masked[index - 1] != "\\"):
                depth += 1
            elif masked[index] == "[" and (index == 0 or masked[index - 1] != "\\"):
                depth -= 1
                if depth == 0:
                    opened = True
                    break
            index -= 1
        if not opened:
            continue
        # The destination: <...>, or up to whitespace or the closing parenthesis, parentheses balanced.
        index = start + 2
        while index < len(masked) and masked[index] in " \t":
            index += 1
        if index < len(masked) and masked[index] == "<":
            end = masked.find(">", index)
            if end < 0:
                continue
            yield start + 2, masked[index + 1:end]
            continue
        depth = 0
        end = index
        while end < len(masked) and not masked[end].isspace():
            if masked[end] == "(":
                depth += 1
            elif masked[end] == ")":
                if depth == 0:
                    break
                depth -= 1
            end += 1
        yield start + 2, masked[index:end]


def check_link(root, source, destination, anchor_cache):
    """None when the destination resolves, else the reason it does not."""
    if not destination or SCHEME.match(destination) or destination.startswith("//"):
        return None
    path_part, _, fragment = destination.partition("#")
    path_part = urllib.parse.unquote(path_part.split("?", 1)[0])
    if path_part == "":
        target = source
    elif path_part.startswith("/"):
        target = os.path.normpath(os.path.join(root, path_part.lstrip("/")))
    else:
        target = os.path.normpath(os.path.join(os.path.dirname(source), path_part))
    if os.path.relpath(target, root).split(os.sep)[0] == "..":
        return "outside the repository"
    if not os.path.exists(target):
        return "no such file or folder: %s" % os.path.relpath(target, root)
    if fragment and target.endswith(".md") and os.path.isfile(target):
        if urllib.parse.unquote(fragment) not in anchors_of(target, anchor_cache):
            return "no heading with anchor #%s in %s" % (fragment, os.path.relpath(target, root))
    elif fragment and os.path.isfile(target) and not GITHUB_LINE_ANCHOR.match(fragment):
        return "an anchor (#%s) into a file that is not Markdown" % fragment
    return None


def check_file(root, path, anchor_cache):
    with open(path, encoding="utf-8", errors="replace") as file:
        text = file.read()
    masked, _ = mask_code(text)
    found = []
    for offset, destination in link_destinations(masked):
        found.append((masked.count("\n", 0, offset) + 1, destination))
    for number, line in enumerate(masked.split("\n"), start=1):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            found.append((number, definition.group(2).strip("<>")))
        for match in HTML_LINK.finditer(line):
            found.append((number, match.group(1)[1:-1]))
    broken = []
    for number, destination in sorted(found):
        reason = check_link(root, path, destination, anchor_cache)
        if reason:
            broken.append("%s:%d: %s -> %s" % (os.path.relpath(path, root), number, destination, reason))
    return broken


def main(arguments):
    if len(arguments) != 2 or not os.path.isdir(arguments[1]):
        print("usage: check-links.py ROOT (the repository's root folder)", file=sys.stderr)
        return 2
    root = os.path.realpath(arguments[1])
    anchor_cache = {}
    broken = []
    files = 0
    for path in markdown_files(root):
        files += 1
        broken.extend(check_file(root, path, anchor_cache))
    for line in broken:
        print(line)
    print("%d Markdown files checked, %d broken links" % (files, len(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
