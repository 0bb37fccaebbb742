"""A query in a language chronorank has no language file for: name it, so that a question read
as timeless says why instead of failing silently.

chronorank reads time words from ``intent/lang/*.json`` (English and Russian ship). A query
written mostly in another script (Chinese, Japanese, Korean, Arabic, Hebrew, Greek, Devanagari,
Thai), or in Latin script with words only a few common languages use (German "neuesten",
French "dernière", Spanish "último" ...), is flagged; the caller warns and the
:class:`~chronorank.types.Intent` carries the name (``Intent.unsupported``). Only a query whose
time words were not read is checked (one regex and one set lookup).
"""

from __future__ import annotations

import re

__all__ = ["unsupported_language", "unsupported_message"]

_SCRIPTS = (
    ("Chinese or Japanese", re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    ("Korean", re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")),
    ("Arabic", re.compile(r"[\u0600-\u06ff]")),
    ("Hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("Greek", re.compile(r"[\u0370-\u03ff]")),
    ("Hindi or another Devanagari language", re.compile(r"[\u0900-\u097f]")),
    ("Thai", re.compile(r"[\u0e00-\u0e7f]")),
)

# words of these languages that are not English words: time words first, then common ones
_WORDS = {
    "German": "neueste neuesten neuester neuestes aktuelle aktuellen aktuellste letzte letzten letzter "
              "jüngste seit wann welche welcher welches gibt ist sind wurde wurden über für nicht und oder "
              "vom zum zur jahr jahres monat gestern heute",
    "French": "dernière dernières derniers récent récente récentes récents actuelle quelle quelles quels "
              "depuis hier aujourd'hui année mois sont était une pour avec",
    "Spanish": "último última últimos últimas reciente recientes cuál cuáles desde ayer hoy año "
               "qué cuándo fue una para",
    "Italian": "ultimo ultima ultimi ultime recente recenti attuale quale quali dal ieri oggi anno mese "
               "cosa quando sono della delle degli",
    "Portuguese": "mais atual qual quais ontem hoje mês quando foi são uma",
    "Dutch": "nieuwste laatste huidige welke sinds gisteren vandaag jaar maand wanneer zijn werd "
             "het een voor",
}
_LEXICON = {w: lang for lang, words in _WORDS.items() for w in words.split()}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def unsupported_language(text: str) -> str | None:
    """The name of the language ``text`` seems written in when no language file covers it, else None."""
    letters = sum(c.isalpha() for c in text)
    if not letters:
        return None
    for name, script in _SCRIPTS:
        if len(script.findall(text)) >= 2:  # two characters: a word of that script, not a stray symbol
            return name
    words = _WORD.findall(text.lower())
    votes: dict[str, int] = {}
    for w in words:
        lang = _LEXICON.get(w)
        if lang is not None:
            votes[lang] = votes.get(lang, 0) + 1
    if not votes:
        return None
    best = max(sorted(votes), key=votes.__getitem__)
    return best


def unsupported_message(query: str, language: str) -> str:
    """The warning: what was not read, and what to do."""
    return (f"the question {query[:60]!r} seems to be in {language}, which chronorank has no language file for: "
            "its time words are not read, so it ranks as a question without time; ask in English or Russian, "
            "or add a language file (intent/lang, CHRONORANK_INTENT_LANG_PATH)")
