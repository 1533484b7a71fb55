"""``Role``: a DSPy module around one typed signature, with a tolerant fallback parse.

When the adapter cannot parse a small model's output (``AdapterParseError``, after DSPy's own
JSON fallback), the role reads the raw text with its tolerant parser instead of failing; what
cannot be read at all becomes empty outputs, which the program reports as a parse failure.

A caller that knows what the role may name (the catalog, the tool being called) passes it as a
per-call ``contract`` (``freyr_dspy.prompting._contracts``); the predictor itself is never
changed. A predictor compiled with a demo pool (``freyr_dspy.prompting._demo_pool``) shows the
demos nearest to each request instead of fixed ones.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import dspy
from dspy.utils.exceptions import AdapterParseError

from freyr_dspy.prompting import (
    POOL_ATTRIBUTE,
    Contract,
    demos_for,
    json_text_fields,
    valid_unicode,
    with_contract,
)

__all__ = ["Role"]

logger = logging.getLogger(__name__)


class Role(dspy.Module):
    """Base class of every role module: one ``dspy.Predict`` over ``signature``."""

    signature: ClassVar[type[dspy.Signature]]
    #: Output cap used when the assignment sets none: small models that lose the format tend
    #: to ramble until the cap, so a role's cap is sized to its longest sensible answer.
    default_max_tokens: ClassVar[int] = 256
    #: Whether the role writes the reply the user reads (``chat``, ``summary``): a request's
    #: cap on the reply's length and its JSON contract apply to these roles only.
    writes_reply: ClassVar[bool] = False

    def __init__(self, role_id: str = "") -> None:
        super().__init__()
        #: The role id this module plays (``intent``, ...): usage is accounted under it.
        self.role_id = role_id
        self.predict = dspy.Predict(self.signature)

    def forward(self, contract: Contract | None = None, **inputs: Any) -> dspy.Prediction:
        """Run the predictor; on a parse failure fall back to ``parse_raw`` on the text.

        Text inputs are made valid Unicode first: they may quote earlier model output (an
        argument with half an emoji), and DSPy sends no text with lone surrogates.

        Args:
            contract: this call's output schemas by field name (what the role may name now).
            **inputs: the signature's input fields.
        """
        inputs = {k: valid_unicode(v) if isinstance(v, str) else v for k, v in inputs.items()}
        if getattr(self.predict, POOL_ATTRIBUTE, None):
            inputs["demos"] = demos_for(self.predict, inputs)
        if contract:
            declared = inputs.get("signature", self.predict.signature)
            inputs["signature"] = with_contract(declared, contract)
        try:
            prediction = self.predict(**inputs)
            outputs = {name: prediction.get(name) for name in self.signature.output_fields}
            parsed_ok = True
        except AdapterParseError as exc:
            logger.debug("%s: adapter parse failed; reading raw output", type(self).__name__)
            outputs = self.parse_raw(exc.lm_response or "")
            parsed_ok = False
        # JSON held to a schema is kept as written: tidying it as prose would break it.
        kept = json_text_fields(inputs.get("signature", self.predict.signature))
        cleaned = {**self.clean(outputs), **{name: outputs[name] for name in kept}}
        return dspy.Prediction(**cleaned, parsed_ok=parsed_ok)

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read the output fields from raw model text. Subclasses override."""
        return {name: text for name in self.signature.output_fields}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Normalise parsed outputs (e.g. split lists). Subclasses override."""
        return outputs
