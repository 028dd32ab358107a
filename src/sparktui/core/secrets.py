"""One scrubber for every place a command line, environment or config text can leave the machine
or reach a screen: the report, the G6 process rows (and so snapshots, peers and the dashboard),
G8's suggestions. Tokens by their shapes, values of secret-named keys, flags and variables, URL
credentials, Authorization headers, and the literal values of secret-named environment variables."""

from __future__ import annotations

import os
import re
from typing import Iterable, Mapping

REDACTED = "[redacted]"

_TOKEN_PATTERNS = (
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}"),  # GitHub classic / OAuth / app tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{16,}"),  # GitHub fine-grained tokens
    re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}"),  # GitLab
    re.compile(r"\bhf_[A-Za-z0-9]{8,}"),  # Hugging Face
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{8,}"),  # OpenAI / Anthropic style keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bnvapi-[A-Za-z0-9_-]{8,}"),  # NVIDIA NGC / build.nvidia.com API keys
)
# A key that names a secret, ending the key (so "tokenizers", "max_tokens" and "pad_token_id" are
# left alone): ..._TOKEN, ..._SECRET, ..._PASSWORD, ..._KEY as a word (API_KEY, NGC_KEY, wandb-key).
_SECRET_WORD = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|APIKEY|(?<![A-Za-z])KEY)"
_SECRET_KEY = r"[A-Za-z0-9_.-]*" + _SECRET_WORD
# "GITHUB_TOKEN=..." or "--token <TOKEN>" in a fix text is an example, not a secret
_PLACEHOLDER = r"(?!(?:\.\.\.|<[^>\s]*>|\$\{?[A-Za-z_]+\}?)(?:[\s,;|}\]]|$))"
_KEY_VALUE = re.compile(
    r"(?i)(?<![A-Za-z0-9_])(?P<q>[\"']?)(?P<key>" + _SECRET_KEY + r")(?P=q)(?P<sep>[ \t]*[:=][ \t]*)"
    r"(?![\"']?\[redacted\])" + _PLACEHOLDER + r"(?P<val>\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;|}\]]+)")
_FLAG_VALUE = re.compile(r"(?i)(?P<flag>--?[\w-]*" + _SECRET_WORD + r"(?:=|[ \t]+))(?![\"']?\[redacted\])" + _PLACEHOLDER + r"(?P<val>\"[^\"]*\"|'[^']*'|\S+)")
_URL_CREDENTIALS = re.compile(r"(?i)\b(?P<scheme>[a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@")
_AUTH_HEADER = re.compile(r"(?i)\b(?P<b>(?:bearer|basic|token)\s+)(?!\[redacted\])(?P<val>[A-Za-z0-9._~+/=-]{12,})")
_SECRET_ENV_NAME = re.compile(r"(?i)" + _SECRET_KEY + r"$")


def _quoted(val: str) -> str:
    if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
        return f"{val[0]}{REDACTED}{val[0]}"
    return REDACTED


def secret_env_values(environ: Mapping[str, str] | None = None, min_len: int = 8) -> list[str]:
    """Values of this process's secret-named environment variables (GITHUB_TOKEN, HF_TOKEN, ...):
    whatever shape they have, they must not appear in anything sparktui writes out."""
    env = os.environ if environ is None else environ
    return sorted({v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v or "") >= min_len},
                  key=len, reverse=True)


def scrub_secrets(text: str, values: Iterable[str] = ()) -> str:
    """Replace anything that looks like a token or a secret's value with ``[redacted]``; ``values``
    are literal secrets to hide wherever they appear (see ``secret_env_values``)."""
    for v in values:
        if v:
            text = text.replace(v, REDACTED)
    for pat in _TOKEN_PATTERNS:
        text = pat.sub(REDACTED, text)
    text = _KEY_VALUE.sub(lambda m: f"{m['q']}{m['key']}{m['q']}{m['sep']}{_quoted(m['val'])}", text)
    text = _FLAG_VALUE.sub(lambda m: f"{m['flag']}{_quoted(m['val'])}", text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    return _AUTH_HEADER.sub(lambda m: f"{m['b']}{REDACTED}", text)
