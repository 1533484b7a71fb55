"""Which of a reply's words may go out while the model is still writing it.

The summary's reply is checked once written (``strategies.replies.checked_reply``): a number
that neither the request nor a tool result states is an invented result, and the reply is
then replaced by one composed from the results; a sentence no call stands behind is dropped.
Text already streamed cannot be taken back, so ``HeldText`` releases a reply as it comes but
holds each number until it is complete and found in the evidence and, given the calls' words,
each sentence until it ends and a call is seen to stand behind it; the first invented number
or claim stops the release (the rest of the answer then comes from the final reply). Leading
and trailing white space is held too, as the final reply has none.
"""

from __future__ import annotations

import re

from freyr_dspy.strategies import CallWords, Evidence, sentences, unsupported_numbers

__all__ = ["HeldText"]

#: The end of the text that a number may still be growing from ("14", "14.", "1,2", "-").
_GROWING = re.compile(r"[\w.,-]*$")
#: Text up to its last ended sentence (what a claim check can judge).
_SENTENCE_ENDED = re.compile(r"^.*[.!?](?=\s|$)", re.S)


class HeldText:
    """Release a reply's text piece by piece, holding what may yet turn out invented.

    Args:
        evidence: what numbers may come from; None releases numbers unchecked (the chat
            role's replies are not checked either).
        calls: what the calls said; given, a sentence goes out only once it has ended and
            one of them stands behind it.
    """

    def __init__(self, evidence: Evidence | None, calls: CallWords | None = None) -> None:
        self.evidence = evidence
        self.calls = calls
        #: True once an invented number was found: nothing more is released.
        self.stopped = False
        self._released = ""
        self._held = ""

    def push(self, text: str) -> str:
        """Take the next piece of the reply; return the text that may go out now."""
        if self.stopped:
            return ""
        self._held += text
        if not self._released:
            self._held = self._held.lstrip()
        ready = self._held.rstrip()
        growing = _GROWING.search(ready)
        if growing is not None and _may_be_number(growing.group()):
            ready = ready[: growing.start()].rstrip()
        if self.calls is not None:
            ended = _SENTENCE_ENDED.search(ready)
            ready = ready[: ended.end()] if ended else ""
        return self._release(ready)

    def finish(self) -> str:
        """The reply has ended: release what was held, if it invents nothing."""
        if self.stopped:
            return ""
        return self._release(self._held.rstrip())

    def _claims(self, text: str) -> bool:
        """Whether ``text`` holds a sentence no call stands behind."""
        if self.calls is None:
            return False
        return any(not self.calls.stand_behind(sentence) for sentence in sentences(text))

    def _release(self, ready: str) -> str:
        if not ready:
            return ""
        candidate = self._released + ready
        invented = self.evidence is not None and unsupported_numbers(candidate, self.evidence)
        if invented or self._claims(ready):
            self.stopped = True
            return ""
        self._released, self._held = candidate, self._held[len(ready) :]
        return ready


def _may_be_number(tail: str) -> bool:
    """Whether more characters may still change the number ``tail`` ends the text with."""
    return any(char.isdigit() for char in tail) or tail.endswith("-")
