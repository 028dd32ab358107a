"""One scrubber for every place a command line, environment or config text can leave the machine
or reach a screen: the report, the G6 process rows (and so snapshots, peers and the dashboard),
G8's suggestions. Tokens by their shapes, values of secret-named keys, flags and variables, URL
credentials, Authorization headers, the password word of a few programs' short flags, and the
literal values of secret-named environment variables. ``redact_ipv6`` hides IPv6 addresses for
``report --redact``.

Linear by construction (issue 22). The scrubber runs on other users' command lines, so every
pattern here is written so that a backtracking engine cannot go super-linear on it:

- a pattern that scans a run of characters (a key, a flag, a URL scheme) starts only where such a
  run starts: the character before the run is part of the match (``pre``), never a lookbehind, so
  a run of 20,000 dashes or dots is scanned once instead of once per position (that was 54-86 s
  for ``check G6`` on ``-`` x 20,000; now milliseconds);
- no nested quantifiers, no two quantifiers that can take the same characters in a row except
  where one is bounded by a literal that the other cannot match;
- what needs context (a placeholder value, a URL's user name, a short flag's program) is decided
  by Python code on the one matched piece, never by lookarounds that rescan the text.

The patterns use only what RE2 also accepts (no lookarounds, no backreferences), and
``benchmarks/regex_linear.py`` runs this same scrubber under ``re`` and under RE2
(``google-re2``). Decision: **stay on ``re``**. Measured on the same machine (saved in
benchmarks/results/regex-linear-2026-12-05.txt): both engines are linear on every adversarial
input (x4 time for x4 input); ``-`` x 20,000 takes 5 ms under ``re`` (79.5 s with the scrubber
before issue 22) and 0.1 ms under RE2; 1 MiB of dashes 0.49 s and 0.007 s; an ordinary command
line 58 and 59 microseconds. RE2 is faster on hostile runs, but ``re`` is already far inside every
target on them, and the process scan scrubs at most 4 KiB of a command line
(probes/processes.py). RE2 would add a C-extension dependency that every fresh install and CI
must find a wheel for (x86-64 and aarch64, Python 3.10-3.13), with a second dialect to keep in
mind (no lookarounds; ``\\b`` and ``\\w`` ASCII only), for no gain a user would notice; the rest of
the package's patterns are held linear the same way by tests/test_linear_patterns.py, which grows
adversarial inputs for every compiled pattern of the package and fails on super-linear growth.

Rules a reader of a scrubbed text should know (docs/fleet.md says the same):
- a URL's password is hidden wherever it ends (``user:pa/ss@``, ``u:p@ssw0rd@host``,
  ``redis://:pw@host``); a user name alone is kept (``ssh://git@host``) unless it looks like a
  token (a known token shape, or 16+ letters/digits/``-_`` holding a digit, or 32+ characters);
- ``-p`` is a password flag only after ``sshpass``, the MySQL/MariaDB clients and a ``login``
  subcommand (``docker login -p``); ``-a`` after ``redis-cli``. Elsewhere ``-p 8000`` is a port
  and stays. After those programs the word after ``-p`` is hidden even when separated by a space
  (mysql would then read it as a database name, but a password typed there would leak);
- keys and flags end with a secret word: TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
  CREDENTIAL(S), APIKEY, COOKIE(S) anywhere (``--hf-token``, ``MY_SECRET``); KEY and PASS only as
  a word of their own (``--api-key``, ``--db-pass``, ``DB_PASS``) or in camelCase (``--secretKey``,
  ``dbPass``), so ``monkey``, ``bypass`` and ``max_tokens`` stay.
"""

from __future__ import annotations

import ipaddress
import os
import re
from typing import Any, Callable, Iterable, Mapping

REDACTED = "[redacted]"

# -- the pattern texts (RE2-compatible: no lookarounds, no backreferences) ---------------------------

_TOKENS_TEXT = "|".join((
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}",  # GitHub classic / OAuth / app tokens
    r"\bgithub_pat_[A-Za-z0-9_]{16,}",  # GitHub fine-grained tokens
    r"\bglpat-[A-Za-z0-9_-]{16,}",  # GitLab
    r"\bhf_[A-Za-z0-9]{8,}",  # Hugging Face
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{8,}",  # OpenAI / Anthropic style keys
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",  # Slack
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids: long-term (AKIA) and temporary (ASIA)
    r"\bnvapi-[A-Za-z0-9_-]{8,}",  # NVIDIA NGC / build.nvidia.com API keys
))

# A key that names a secret ends with one of these words (so "tokenizers", "max_tokens" and
# "pad_token_id" are left alone). KEY and PASS only as a word of their own or in camelCase.
_WORD_ANYWHERE = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|APIKEY|COOKIES?)"
_WORD_OWN = r"(?:KEY|PASS)"
_CAMEL = r"(?-i:[a-z0-9](?:Key|Pass))"


def _secret_key(run: str, non_letter: str) -> str:
    """A run of key characters ``run`` ending with a secret word; ``non_letter``: the run's
    characters that end a word (before KEY / PASS)."""
    return (rf"(?:[{run}]*{_WORD_ANYWHERE}|(?:[{run}]*[{non_letter}])?{_WORD_OWN}|[{run}]*{_CAMEL})")


_KEY_RUN = r"A-Za-z0-9_.-"
_SECRET_KEY = _secret_key(_KEY_RUN, r"0-9_.-")
# KEY=value, "key": "value", key: value. ``pre`` is the character before the key (or the start).
_KEY_VALUE_TEXT = (
    r"(?i)(?P<pre>^|[^" + _KEY_RUN + r"])(?P<q>[\"']?)(?P<key>" + _SECRET_KEY + r")(?P<q2>[\"']?)"
    r"(?P<sep>[ \t]*[:=][ \t]*)(?P<val>\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;|}\]]+)")
# --flag value, --flag=value, -flag value: a dash somewhere in the word (my-api-key, --hf_token).
_FLAG_VALUE_TEXT = (
    r"(?i)(?P<pre>^|[^\w-])(?P<flag>\w*-" + _secret_key(r"\w-", r"0-9_-") + r"(?:=|[ \t]+))"
    r"(?P<val>\"[^\"]*\"|'[^']*'|\S+)")
# scheme://... up to the next space or quote; the callback finds the user name and password.
_URL_TEXT = r"(?i)(?P<pre>^|[^a-z0-9+.-])(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<rest>[^\s\"'<>`]+)"
_AUTH_HEADER_TEXT = r"(?i)\b(?P<b>(?:bearer|basic|token)\s+)(?P<val>[A-Za-z0-9._~+/=-]{12,})"
# Programs whose short flag takes a password; the rest of that command (to a newline, ; | or &).
_SHORT_FLAG_PROGRAMS = {"sshpass": "-p", "mysql": "-p", "mysqldump": "-p", "mysqladmin": "-p", "mysqlimport": "-p",
                        "mysqlcheck": "-p", "mysqlsh": "-p", "mariadb": "-p", "mariadb-dump": "-p",
                        "mariadb-admin": "-p", "login": "-p", "redis-cli": "-a"}
_SHORT_FLAG_COMMAND_TEXT = (
    r"(?P<pre>^|[\s/;|&(])(?P<prog>" + "|".join(sorted(map(re.escape, _SHORT_FLAG_PROGRAMS), key=len, reverse=True))
    + r")(?P<seg>[ \t][^\n;|&]*)")
# inside one such command: the flag, attached (-pSECRET) or followed by spaces (-p SECRET)
_SHORT_FLAG_TEXT = r"(?P<pre>[ \t])(?P<flag>-[pa])(?P<sp>[ \t]*)(?P<val>[^\s\"']\S*|\"[^\"]*\"|'[^']*')"
_PLACEHOLDER_TEXT = r"\.\.\.|<[^<>\s]*>|\$\{?[A-Za-z_]+\}?"
# an IPv6 candidate: hex digits, colons and dots (for ::ffff:10.0.0.1) holding a colon
_IPV6_TEXT = r"(?P<pre>^|[^0-9A-Za-z_:.])(?P<ip>[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)"
_TOKENISH_USER_TEXT = r"[A-Za-z0-9_-]+"  # and a digit among them
_PORT_PATH_TEXT = r"[0-9]{1,5}(?:/.*)?"

# -- compiled with ``re`` (module-level, so tests/test_linear_patterns.py grows inputs for each) -----

_TOKENS = re.compile(_TOKENS_TEXT)
_KEY_VALUE = re.compile(_KEY_VALUE_TEXT)
_FLAG_VALUE = re.compile(_FLAG_VALUE_TEXT)
_URL = re.compile(_URL_TEXT)
_AUTH_HEADER = re.compile(_AUTH_HEADER_TEXT)
_SHORT_FLAG_COMMAND = re.compile(_SHORT_FLAG_COMMAND_TEXT)
_SHORT_FLAG = re.compile(_SHORT_FLAG_TEXT)
_PLACEHOLDER = re.compile(_PLACEHOLDER_TEXT)
_IPV6 = re.compile(_IPV6_TEXT)
_TOKENISH_USER = re.compile(_TOKENISH_USER_TEXT)
_PORT_PATH = re.compile(_PORT_PATH_TEXT, re.S)
# used with fullmatch on the whole name; starts only where a run of name characters starts
_SECRET_ENV_NAME = re.compile(r"(?i)(?:^|[^" + _KEY_RUN + r"])" + _SECRET_KEY)

PATTERN_TEXTS = {  # name -> (text, flags): what benchmarks/regex_linear.py compiles under each engine
    "tokens": (_TOKENS_TEXT, 0), "key_value": (_KEY_VALUE_TEXT, 0), "flag_value": (_FLAG_VALUE_TEXT, 0),
    "url": (_URL_TEXT, 0), "auth_header": (_AUTH_HEADER_TEXT, 0), "short_flag_command": (_SHORT_FLAG_COMMAND_TEXT, 0),
    "short_flag": (_SHORT_FLAG_TEXT, 0), "placeholder": (_PLACEHOLDER_TEXT, 0), "tokenish_user": (_TOKENISH_USER_TEXT, 0),
    "port_path": (_PORT_PATH_TEXT, re.S),
}


def _quoted(val: str) -> str:
    if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
        return f"{val[0]}{REDACTED}{val[0]}"
    return REDACTED


def _already(m: Any) -> bool:
    """The value (group ``val``, which ends every match that has one) is already ``[redacted]``,
    quoted or not: scrubbing twice changes nothing."""
    i = m.end() - len(m.group("val"))
    if m.string[i:i + 1] in ("\"", "'"):
        i += 1
    return m.string.startswith(REDACTED, i)


class _Scrubber:
    """The passes, on compiled patterns of one engine (``re`` here; RE2 in the benchmark)."""

    def __init__(self, compiled: Mapping[str, Any]) -> None:
        self.p = compiled

    def _placeholder(self, val: str) -> bool:
        """``GITHUB_TOKEN=...``, ``--token <TOKEN>``, ``$HF_TOKEN`` in a fix text: an example, not a secret."""
        return self.p["placeholder"].fullmatch(val) is not None

    def _key_value(self, m: Any) -> str:
        val = m.group("val")
        if _already(m) or self._placeholder(val):
            return m.group(0)
        return f"{m.group('pre')}{m.group('q')}{m.group('key')}{m.group('q2')}{m.group('sep')}{_quoted(val)}"

    def _flag_value(self, m: Any) -> str:
        val = m.group("val")
        if _already(m) or self._placeholder(val):
            return m.group(0)
        return f"{m.group('pre')}{m.group('flag')}{_quoted(val)}"

    def _url(self, m: Any) -> str:
        """Each URL in the matched run (one may hold another: ``?next=https://u:pw@host``): the part
        after each ``://`` loses its user name and password."""
        parts = m.group("rest").split("://")
        for i, part in enumerate(parts):
            userinfo = self._userinfo(part)
            if userinfo is not None:
                parts[i] = f"{REDACTED}@{part[len(userinfo) + 1:]}"
        return f"{m.group('pre')}{m.group('scheme')}{'://'.join(parts)}"

    def _userinfo(self, rest: str) -> str | None:
        """The secret part of a URL after ``scheme://`` (up to its ``@``), or None when it has none."""
        end = len(rest)
        for sep in "/?#":
            i = rest.find(sep)
            if i != -1 and i < end:
                end = i
        authority = rest[:end]
        at = authority.rfind("@")
        if at != -1:  # user:p@ssw0rd@host: the host follows the last @ of the authority
            info = authority[:at]
        else:
            colon = authority.find(":")
            at = rest.find("@", end)
            # user:pa/ss@host: a password holding a slash; host:8080/path@tag is a port and a path
            if colon == -1 or at == -1 or self.p["port_path"].fullmatch(rest[colon + 1:at]):
                return None
            info = rest[:at]
        if not info or info == REDACTED:
            return None
        if ":" in info or len(info) >= 32 or (len(info) >= 16 and self.p["tokenish_user"].fullmatch(info)
                                                 and any(c in "0123456789" for c in info)):
            return info
        return None  # a plain user name (git@, alice@)

    def _short_flag_command(self, m: Any) -> str:
        flag = _SHORT_FLAG_PROGRAMS[m.group("prog")]

        def one(f: Any) -> str:
            if f.group("flag") != flag or _already(f):
                return f.group(0)
            return f"{f.group('pre')}{f.group('flag')}{f.group('sp')}{_quoted(f.group('val'))}"

        seg = m.group("seg")
        # only the first such flag: after sshpass's own options comes the command (ssh -p 2222)
        for f in self.p["short_flag"].finditer(seg):
            if f.group("flag") == flag:
                seg = seg[:f.start()] + one(f) + seg[f.end():]
                break
        return f"{m.group('pre')}{m.group('prog')}{seg}"

    def scrub(self, text: str, values: Iterable[str] = ()) -> str:
        for v in values:
            if v:
                text = text.replace(v, REDACTED)
        text = self.p["tokens"].sub(REDACTED, text)
        # each pass needs a character its matches always hold: a text without it skips the pass
        if "://" in text:
            text = self.p["url"].sub(self._url, text)
        if "=" in text or ":" in text:
            text = self.p["key_value"].sub(self._key_value, text)
        if "-" in text:
            text = self.p["flag_value"].sub(self._flag_value, text)
            text = self.p["short_flag_command"].sub(self._short_flag_command, text)
        return self.p["auth_header"].sub(lambda m: f"{m.group('b')}{REDACTED}", text)


def compile_scrubber(compile_: Callable[[str, int], Any]) -> Callable[..., str]:
    """``scrub_secrets`` with every pattern compiled by ``compile_(text, flags)`` (``re.compile``,
    or RE2's ``compile`` in benchmarks/regex_linear.py)."""
    return _Scrubber({name: compile_(text, flags) for name, (text, flags) in PATTERN_TEXTS.items()}).scrub


_RE = _Scrubber({"tokens": _TOKENS, "key_value": _KEY_VALUE, "flag_value": _FLAG_VALUE, "url": _URL,
                 "auth_header": _AUTH_HEADER, "short_flag_command": _SHORT_FLAG_COMMAND, "short_flag": _SHORT_FLAG,
                 "placeholder": _PLACEHOLDER, "tokenish_user": _TOKENISH_USER, "port_path": _PORT_PATH})


def secret_env_values(environ: Mapping[str, str] | None = None, min_len: int = 8) -> list[str]:
    """Values of this process's secret-named environment variables (GITHUB_TOKEN, HF_TOKEN, ...):
    whatever shape they have, they must not appear in anything sparktui writes out."""
    env = os.environ if environ is None else environ
    return sorted({v for k, v in env.items() if _SECRET_ENV_NAME.fullmatch(k) and len(v or "") >= min_len},
                  key=len, reverse=True)


def scrub_secrets(text: str, values: Iterable[str] = ()) -> str:
    """Replace anything that looks like a token or a secret's value with ``[redacted]``; ``values``
    are literal secrets to hide wherever they appear (see ``secret_env_values``). Linear in the
    length of ``text`` (see the module docstring); callers still cut what they match
    (probes/processes.py scrubs at most ``COMMAND_SCRUBBED`` characters of a command line)."""
    return _RE.scrub(text, values)


def redact_ipv6(text: str, placeholder: str = "<ip>") -> str:
    """IPv6 addresses (``fe80::1%eth0``, ``[2001:db8::1]:22``, ``::ffff:10.0.0.1``, full GIDs)
    become ``placeholder``; loopback (``::1``) and unspecified (``::``) stay, and so does whatever
    is no address (times ``12:34:56``, MACs ``aa:bb:cc:dd:ee:ff``, ``std::vector``)."""

    def one(m: re.Match) -> str:
        ip = m.group("ip")
        for cand in (ip, ip.rstrip(".:")):
            try:
                addr = ipaddress.IPv6Address(cand)
            except ValueError:
                continue
            if addr.is_loopback or addr.is_unspecified:
                return m.group(0)
            return f"{m.group('pre')}{placeholder}{ip[len(cand):]}"
        return m.group(0)

    return _IPV6.sub(one, text)
