#!/usr/bin/env python3
"""Generates crates/quire-tools/src/search_wordnet.rs: English words folded
onto the words of searchTools' vocabulary (crates/quire-tools/src/search.rs),
from WordNet 3.0.

    apt-get install wordnet-base      # WordNet 3.0 under /usr/share/wordnet
    python3 scripts/search_wordnet.py

The table maps a word the vocabulary does not know onto the vocabulary's
word it means. For each sense below (a word of the vocabulary in the one
WordNet sense the tools mean, e.g. `remove.v.1`), it takes the other words
of that sense, the more specific words of the senses marked `+` ("excise" is
a way to remove) and the words derived from them ("removal"). A word is kept
only when this sense is its most common one (the first WordNet lists) and it
was seen in WordNet's tagged text, so rare and mostly-other meanings stay
out; a word two senses claim is left out, as are the words of EXCLUDED and
those search.rs already finds by a plural's or a tense's ending.

A second table, IRREGULAR, maps the irregular forms of a few verbs of the
vocabulary onto them ("wrote" → write, "hidden" → hide), from WordNet's
exception lists: the verbs of VERBS, whose past forms people use ("has
anyone written about …", "who took the page down").

Run it again when the vocabulary changes; it rewrites the module whole.
"""

import collections
import pathlib
import re
import sys

WORDNET = pathlib.Path("/usr/share/wordnet")
ROOT = pathlib.Path(__file__).resolve().parent.parent
SEARCH = ROOT / "crates/quire-tools/src/search.rs"
OUT = ROOT / "crates/quire-tools/src/search_wordnet.rs"

# WordNet sense (lemma.pos.n, n counted from 1) → the vocabulary's word for
# it; `+` also takes the sense's more specific words.
SENSES = """
delete.v.1 delete +
remove.v.1 remove +
remove.v.3 remove +
erase.v.1 erase
erase.v.2 erase
destroy.v.1 destroy
discard.v.1 scrap +
get_rid_of.v.1 remove
change.v.1 change
alter.v.1 change
modify.v.1 change
edit.v.1 edit +
correct.v.1 correct +
fix.v.1 fix
revise.v.1 edit
amend.v.1 edit
replace.v.1 replace +
shorten.v.1 shorten +
lengthen.v.1 lengthen
improve.v.1 improve
rename.v.1 rename
hide.v.1 hide
publish.v.2 publish
restore.v.5 restore
recover.v.1 recover
copy.v.3 copy
duplicate.v.3 duplicate
create.v.2 create
add.v.1 add
write.v.1 write +
compose.v.1 compose
show.v.4 show
display.v.1 display
search.v.1 search +
find.v.3 find
archive.v.1 archive
import.v.1 import
download.v.1 download
photograph.n.1 photo +
picture.n.1 picture +
illustration.n.1 illustration
article.n.1 article +
announcement.n.1 announcement +
news.n.1 news
note.n.1 note +
memo.n.1 memo
diary.n.1 diary
folder.n.2 folder
directory.n.1 folder
menu.n.3 menu
web_page.n.1 page +
home_page.n.1 homepage
heading.n.1 heading +
caption.n.1 caption
testimonial.n.1 testimonial
product.n.1 product
"""

# Words a sense above brings that mean something else here more often.
EXCLUDED = set(
    """
    issue issuer fold finder still fish grope fumble testify iconic captious
    pictural additive alterable modifiable destructible destructive eraser
    remotion remover repairer mender changer improver shortener recoverer
    duplicator reviser searcher importee importer wipeout writer redactor
    depict exhibition dig shed amputate extract dislodge penning seeking
    regaining revisal revising replacing importing fixing editing writing
    degas delve muck offsaddle unpack inset sonogram collage longshot
    dramatize diarist amendable amendatory ameliorative amelioratory
    meliorative melioration amelioration
    """.split()
)

# Verbs whose irregular forms are read as them.
VERBS = set(
    """
    write rewrite take hide show send throw bring undo withdraw find lose keep
    spin stick strike tell see go say
    """.split()
)

POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}


def load():
    index, synsets = {}, {}
    for p, name in POS.items():
        for line in open(WORDNET / f"index.{name}", encoding="latin-1"):
            if line.startswith(" "):
                continue
            f = line.split()
            lemma, count, pointers = f[0], int(f[2]), int(f[3])
            index[(lemma, p)] = f[6 + pointers : 6 + pointers + count]
        for line in open(WORDNET / f"data.{name}", encoding="latin-1"):
            if line.startswith(" "):
                continue
            f = line.split("|")[0].split()
            words = [f[4 + 2 * i].lower() for i in range(int(f[3], 16))]
            k = 4 + 2 * len(words)
            pointers = []
            for _ in range(int(f[k])):
                symbol, offset, pos, st = f[k + 1 : k + 5]
                pointers.append((symbol, offset, "a" if pos == "s" else pos, st))
                k += 4
            synsets[(p, f[0])] = (words, pointers)
    seen = collections.Counter()
    for line in open(WORDNET / "cntlist.rev"):
        key, number, count = line.split()
        lemma, rest = key.split("%")
        seen[(lemma, "nvara"[int(rest[0]) - 1], int(number))] += int(count)
    return index, synsets, seen


def regular(word):
    """The plain forms search.rs finds by itself (`plain`): a plural's or a
    tense's ending dropped, a doubled consonant undone."""
    out = set()
    if word.endswith("ies"):
        out.add(word[:-3] + "y")
    for suffix in ("es", "s", "ing", "ed", "d"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            out.add(stem)
            if suffix == "ing":
                out.add(stem + "e")
            if suffix in ("ing", "ed") and len(stem) > 2 and stem[-1] == stem[-2]:
                out.add(stem[:-1])
    return out


def vocabulary():
    text = SEARCH.read_text()
    table = text[text.index("const VOCABULARY") : text.index("/// The concepts that name what a tool works on")]
    keys = re.findall(r'\("([^"]+)", &\[', table)
    return {w for k in keys for w in k.split() if w != "…"}


def main():
    index, synsets, seen = load()
    known = vocabulary()
    found = collections.defaultdict(set)

    def rank(lemma, p, offset):
        senses = index.get((lemma, p), [])
        return senses.index(offset) if offset in senses else None

    def keep(lemma, p, offset, target, tagged=True):
        if not re.fullmatch("[a-z]+", lemma) or lemma in known or lemma in EXCLUDED or regular(lemma) & known:
            return
        r = rank(lemma, p, offset)
        if r != 0 or (tagged and seen[(lemma, p, 1)] < 1):
            return
        found[lemma].add(target)

    for line in SENSES.split("\n"):
        if not line.strip():
            continue
        sense, target, *more = line.split()
        lemma, p, n = sense.split(".")
        if target not in known:
            sys.exit(f"{target} is not a word of the vocabulary")
        offset = index[(lemma, p)][int(n) - 1]
        words, pointers = synsets[(p, offset)]
        around = [offset] + [o for s, o, q, _ in pointers if s == "~" and q == p and more]
        for o in around:
            for w in synsets[(p, o)][0]:
                keep(w, p, o, target)
        # derived forms: a removal, a revision
        for s, o, q, st in pointers:
            if s == "+":
                w = synsets[(q, o)][0][int(st[2:], 16) - 1]
                keep(w, q, o, target, tagged=False)
    synonyms = sorted((w, next(iter(t))) for w, t in found.items() if len(t) == 1)

    irregular = set()
    for line in open(WORDNET / "verb.exc"):
        form, base = line.split()[:2]
        if base in VERBS and base in known and re.fullmatch("[a-z]+", form) and form not in known and base not in regular(form):
            irregular.add((form, base))

    notice = (WORDNET.parent / "doc/wordnet-base/copyright").read_text()
    licence = notice[notice.index(" This software and database") : notice.index("Files: debian/*")]
    licence = "\n".join("//! " + l[1:].replace(".", "", 1) if l.strip() == "." else "//!" + l for l in licence.strip("\n").split("\n"))
    licence = re.sub(r"//! *$", "//!", licence, flags=re.M)
    rows = lambda pairs: "".join(f'    ("{a}", "{b}"),\n' for a, b in pairs)
    OUT.write_text(
        "//! English words folded onto the words of searchTools' vocabulary, from\n"
        "//! WordNet 3.0. Generated by `scripts/search_wordnet.py`; do not edit.\n"
        "//!\n"
        "//! WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.\n"
        "//! Its licence, which these tables are distributed under:\n"
        "//!\n"
        f"{licence}\n"
        "\n"
        "/// A word → the vocabulary's word it means (the same sense, a more\n"
        "/// specific way of it, or a form derived from it).\n"
        f"pub(crate) const SYNONYMS: &[(&str, &str)] = &[\n{rows(synonyms)}];\n"
        "\n"
        "/// An irregular form of a verb of the vocabulary → the verb.\n"
        f"pub(crate) const IRREGULAR: &[(&str, &str)] = &[\n{rows(sorted(irregular))}];\n"
    )
    print(f"{len(synonyms)} synonyms, {len(irregular)} irregular forms → {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
