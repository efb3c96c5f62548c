"""`torchmetrics.functional.text` on torchtally: the functions that have a compatible class
(error rates, word information, perplexity, BLEU), each that class's value on one batch."""

from torchtally.compat.torchmetrics.functional.text.bleu import bleu_score
from torchtally.compat.torchmetrics.functional.text.cer import char_error_rate
from torchtally.compat.torchmetrics.functional.text.mer import match_error_rate
from torchtally.compat.torchmetrics.functional.text.perplexity import perplexity
from torchtally.compat.torchmetrics.functional.text.wer import word_error_rate
from torchtally.compat.torchmetrics.functional.text.wil import word_information_lost
from torchtally.compat.torchmetrics.functional.text.wip import word_information_preserved

__all__ = [
    "bleu_score",
    "char_error_rate",
    "match_error_rate",
    "perplexity",
    "word_error_rate",
    "word_information_lost",
    "word_information_preserved",
]
