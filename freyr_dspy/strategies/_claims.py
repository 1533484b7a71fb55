"""Which sentences of a reply a call stands behind, and what a reply claims no call did.

Asked for the weather and a table booking, with a weather tool only, Qwen 1.5B made the weather
call and replied "Weather in Tokyo: 22 C, sunny. Booked a table for two at 8pm." The number
check (``_grounding.unsupported_numbers``) passes it: 8 comes from the request. For an app
whose tools act on the world, a reply that claims an action nobody took is the worst failure
there is, so a reply is read sentence by sentence:

* after calls (the summary), a sentence that states something must share a content word with
  some call - its tool's name, an argument value, what it returned. A sentence that shares
  none ("Booked a table for two at 8pm.") is a claim no call stands behind: it is dropped,
  and the part of the request it claims becomes an ask not done, named in the reply;
* with no call (the chat role, tools on offer), a sentence that says something was done
  ("I've booked your table", "Your alarm is set") is such a claim, however it is worded in
  English.

Sentences that decline ("I could not ..."), ask or offer ("Would you like ...?") claim
nothing and are kept. Words are compared case-folded by their first ``_STEM`` letters, so
"booked" meets a ``book_table`` tool and "alarms" an ``alarm``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from freyr_dspy.schemas import CallRecord

__all__ = ["CallWords", "asked_in", "claims_done", "sentences", "unbacked_sentences"]

#: How the summary's outcomes list an ask no call carried out (``_replies.outcomes_text``).
NOT_DONE = "- not done:"
#: Letters two words must share from their start to count as the same word.
_STEM = 4
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"\d")
#: A sentence that says something was not done, asks, or offers: it claims nothing.
_NO_CLAIM = re.compile(
    r"\b(not|n't|cannot|unable|couldn|could not|can't|isn't|wasn't|unavailable|no tool|"
    r"none of|would you|do you|shall i|should i|can i|let me know|if you)\b|\?$",
    re.IGNORECASE,
)
#: English for "this was done": a perfect tense in the first person, a state reached, or a
#: past participle opening the sentence ("Booked a table ...", "Done.").
_DONE = re.compile(
    r"\b(i(?:'ve| have| just| went ahead and)|i\s+\w+ed\b|(?:has|have) been|"
    r"(?:is|are) (?:now |all )?(?:set|done|booked|scheduled|confirmed|sent|ready|on its way)|"
    r"all set|successfully)\b|^(?:done|booked|sent|scheduled|added|created|set|ordered|"
    r"reserved|cancell?ed|deleted|removed|updated|transferred|paid|confirmed|moved|renamed|"
    r"turned|started|stopped|opened|closed)\b",
    re.IGNORECASE,
)
#: Where a participle says what was done: "Deleted the note.", "Note pinned successfully.",
#: "Note 'Dentist questions' deleted.", "I've pinned the note."
_DONE_VERBS = (
    re.compile(r"^([a-z]+ed)\b", re.IGNORECASE),
    re.compile(r"\b([a-z]+ed)\s+successfully\b", re.IGNORECASE),
    re.compile(r"\b([a-z]+ed)\W*$", re.IGNORECASE),
    re.compile(r"\b(?:i've|i have|has been|have been|was|were)\s+([a-z]+ed)\b", re.IGNORECASE),
)
#: How an outcome the roles are shown says the call failed (``Outcome.render``).
_FAILED = ": ERROR: "
#: Words that say nothing about what was done (English; 3 letters and more).
_FILLER = frozenset(
    """the and for you your are was were has have had been this that with from into here there
    what which who whom whose when where how about also just now all any some its it's they
    them their our ours his her she him let know need anything else more please thank thanks
    will would can could should may might shall done sure okay yes great happy glad help
    information result results following below above asked request requested""".split()
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


class CallWords:
    """What the calls of a request said, word by word: their tools, values and results.

    ``done`` holds the words of the calls that succeeded: a sentence saying something was
    done ("Note pinned successfully.", "Deleted the old list.") needs one of those behind it.
    ``tools`` are the offered tools' names: a participle saying what was done that begins with
    one's action ("Deleted ...", "... pinned successfully", "... deleted." for ``delete_note``,
    ``pin_note``) needs a call of that action that succeeded.
    Asked to pin one note and delete another, with only a pin planned and that pin failing,
    Qwen 1.5B replied "Note 'running-plan' pinned successfully. Deleted dentist questions note."
    """

    def __init__(
        self,
        words: Iterable[str],
        done: Iterable[str] = (),
        tools: Iterable[str] = (),
        done_tools: Iterable[str] = (),
    ) -> None:
        self.stems = _stems(words)
        self.done = _stems(done)
        self.actions = {_action(name) for name in tools} - {""}
        self.done_actions = {_action(name) for name in done_tools}

    @classmethod
    def of(cls, calls: Sequence[CallRecord], tools: Iterable[str] = ()) -> CallWords:
        """The words of ``calls``; ``tools``: the names of the tools offered."""
        succeeded = [c for c in calls if c.outcome.ok]
        done_tools = [call.tool for call in succeeded]
        return cls(_call_words(calls), _call_words(succeeded), tools, done_tools)

    @classmethod
    def of_text(cls, outcomes: str) -> CallWords:
        """The words of the calls as the summary role is shown them (its ``outcomes``).

        The asks shown as not done (``- not done: ...``) are no call's: left out; a line whose
        outcome is an ``ERROR:`` is a call that did nothing.
        """
        lines = [line for line in outcomes.splitlines() if not line.startswith(NOT_DONE)]
        done = [line for line in lines if _FAILED not in line]
        every, succeeded = ("\n".join(part).casefold() for part in (lines, done))
        return cls(_WORD.findall(every), _WORD.findall(succeeded))

    def stand_behind(self, sentence: str) -> bool:
        """Whether some call stands behind ``sentence`` (or it claims nothing)."""
        if _NO_CLAIM.search(sentence):
            return True
        words = _content_words(sentence)
        if not words:
            return True
        if any(self._undone(verb) for verb in _done_verbs(sentence)):
            return False
        return bool(_stems(words) & (self.done if claims_done(sentence) else self.stems))

    def _undone(self, verb: str) -> bool:
        """Whether ``verb`` ("deleted") names an offered tool's action no call carried out."""
        named = any(verb.startswith(a) for a in self.actions)
        return named and not any(verb.startswith(a) for a in self.done_actions)


def unbacked_sentences(
    reply: str, calls: Sequence[CallRecord], tools: Iterable[str] = ()
) -> list[str]:
    """The sentences of ``reply`` that state something no call stands behind (in order).

    ``tools``: the names of the tools offered (``CallWords``).
    """
    behind = CallWords.of(calls, tools)
    return [sentence for sentence in sentences(reply) if not behind.stand_behind(sentence)]


def claims_done(sentence: str) -> bool:
    """Whether ``sentence`` says something was done (and does not decline, ask or offer)."""
    return bool(_DONE.search(sentence.strip())) and not _NO_CLAIM.search(sentence)


def asked_in(message: str, claim: str) -> str | None:
    """The part of ``message`` that ``claim`` says was done, or None when none reads like it.

    The request is cut into clauses (commas, "and", "then", sentence ends); the clause sharing
    the most content words with the claim, and at least two or half of the claim's, is it.
    """
    wanted = _stems(_content_words(claim))
    if not wanted:
        return None
    best, best_shared = None, 0
    for clause in _clauses(message):
        shared = len(_stems(_content_words(clause)) & wanted)
        if shared > best_shared:
            best, best_shared = clause, shared
    enough = best_shared >= min(2, len(wanted)) or 2 * best_shared >= len(wanted)
    return best if best is not None and enough else None


_CLAUSE_BREAK = re.compile(r"\s*(?:[,;]|\band\b|\bthen\b|\balso\b|[.?!](?=\s|$))\s*", re.I)


def _clauses(message: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_BREAK.split(message) if c and c.strip()]


def _done_verbs(sentence: str) -> list[str]:
    text = sentence.strip()
    return [m.group(1).casefold() for pattern in _DONE_VERBS if (m := pattern.search(text))]


def _action(tool: str) -> str:
    """The action a tool's name opens with (``delete`` of ``delete_note``), 3 letters or more."""
    words = _WORD.findall(tool.casefold())
    return words[0] if words and len(words[0]) >= 3 else ""


def _call_words(calls: Sequence[CallRecord]) -> list[str]:
    words: list[str] = []
    for call in calls:
        words += _WORD.findall(call.tool.casefold())
        for value in _leaves(call.arguments):
            words += _WORD.findall(str(value).casefold())
        words += _WORD.findall(call.outcome.message.casefold())
    return words


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _content_words(text: str) -> list[str]:
    """The words of ``text`` that say what: 3 letters or more, or a number; no filler."""
    return [
        w
        for w in _WORD.findall(text.casefold())
        if (len(w) >= 3 or _NUMBER.search(w)) and w not in _FILLER
    ]


def _stems(words: Iterable[str]) -> set[str]:
    return {w[:_STEM] for w in words}
