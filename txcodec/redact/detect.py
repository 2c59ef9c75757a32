"""What redaction finds in a text: secrets (detect-secrets' pattern plugins plus the shapes they
miss in transcripts) and personal data. Each finding is a span of the text and a kind; the
kinds' categories are what ``--keep`` names (docs/redact.md#what-it-finds).

The patterns hold in a decoded string value and in the raw JSON text of a line alike (a quote
may be escaped, a line break be ``\\n``): a file's raw bytes are searched first, and only the
lines with a finding are decoded (docs/redact.md#how-it-works). Every literal a rule needs is
found in one Aho-Corasick pass, and Python's ``re`` scans quickly only for a pattern that opens
with a literal, so each rule is one of three modes:

* ``scan``: the pattern opens with its literal (a token's prefix) and is matched at each place
  the literal is (a one-character literal: searched from its first place);
* ``keyword``: the pattern opens with a keyword (``password``, ``token``, ``bearer``…), found
  in the lowered bytes, and is matched at each place the keyword is;
* ``window``: the pattern is searched around each place its trigger literal is (a password in
  a URL around its ``://``);
* ``at``: the pattern opens with its trigger and is matched at each place the trigger is; the
  run of ``before``'s characters just before the trigger is the match's head (an email: its
  domain matched from the ``@``, its local part read backwards). A window's search would try
  every place of the window, and an ``@`` is in most files thousands of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

import msgspec

from ..core.errors import InputError

EXTRA = "pip install 'txcodec[redact]'"

_Q = r"(?:\\*[\"'`])?"  # an optional quote around a name or a value (escaped in a JSON text)
_B = "[A-Za-z0-9_]"  # a character a token does not follow or precede
_VALUE = r"([^\s\"'`\\,;(){}\[\]<>]{6,300})"  # a value after ``NAME=``, up to a quote, space or bracket
# A value that only names one: a placeholder, a variable, a redaction already made, a number,
# a word, an identifier (``_app_key``), a call's name (``Base.url_encode64``: lower case after
# the dot), a symbol (``:unique``), a lower-case path or an environment variable's name.
_NOT_A_VALUE = re.compile(
    r"^(?:|\$.*|%.*|\{\{.*|<.*>|\*+|x+|X+|\.+|null|none|None|true|false|changeme|example|your[-_].*|redacted.*|«.*"
    r"|.*\.\.\.|_*[a-z]+(?:[-_][a-z]+)*|[A-Za-z_]+(?:\.[A-Za-z_]+)+|[A-Za-z]{1,24}|[\d.,:+-]+"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+|:[A-Za-z_][A-Za-z0-9_]*[?!]?|(?:[a-z0-9_.-]+/)+[a-z0-9_.-]*"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|(?:self|this|os|process|config|settings|args|env|params|request)\b.*)$"
)


# the kinds found by a name or a header before the value (not by the value's own shape): a value
# there that only names one (a variable, a word, a number) is left alone
BY_CONTEXT = {
    "aws-secret-key", "url-password", "bearer-token", "basic-auth", "auth-header", "env-secret", "high-entropy-secret",
}  # fmt: skip


class Rule(msgspec.Struct, frozen=True):
    kind: str
    pattern: str
    mode: str = "scan"  # scan, keyword, window or at
    group: int = 0  # the group holding the value (0: the match; -1: every non-empty group)
    triggers: tuple[str, ...] = ()  # keyword: lower-case keywords; window: literals
    back: int = 0  # window: how far before the trigger a match may start; at: the head's longest run
    forward: int = 400  # window: how far after it a match may end
    flags: int = 0
    before: str = ""  # at: the characters of the head (a regex character class's body)


def _scan(kind: str, *prefixes_and_rest: str, group: int = 0) -> list[Rule]:
    """One scan rule per literal prefix: ``prefix + rest``, the character before the prefix
    not a token's (checked after the literal, so that the pattern still opens with it)."""
    *prefixes, rest = prefixes_and_rest
    rules = []
    for prefix in prefixes:
        literal = re.escape(prefix)
        rules.append(Rule(kind, f"{literal}(?<!{_B}{literal}){rest}", group=group))
    return rules


_KEYWORDS = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "credential",
    "auth",
    "key",
)
_KEYWORD_RE = (
    r"(?i:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|credential"
    r"|auth(?:[_-]?(?:token|key|secret|pass))|(?<![a-z])auth(?![a-z])|(?<![a-z])key)"
)

RULES: list[Rule] = [
    Rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----(?:(?!-----END)[\s\S]){0,20000}"
        r"(?:-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----)?",
    ),
    *_scan("aws-access-key-id", "AKIA", "ASIA", "ABIA", "ACCA", "A3T", r"[0-9A-Z]{16}(?![0-9A-Za-z])"),
    Rule(
        "aws-secret-key",
        r"aws[\w.-]{0,20}?secret[\w.-]{0,20}?" + _Q + r"\s*[:=]\s*" + _Q + r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "keyword",
        1,
        ("aws",),
        flags=re.I,
    ),
    *_scan("google-api-key", "AIza", r"[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    *_scan("google-oauth-secret", "GOCSPX-", r"[0-9A-Za-z_-]{28}"),
    *_scan("github-token", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", r"[A-Za-z0-9_]{36,255}"),
    *_scan("github-token", "github_pat_", r"[A-Za-z0-9_]{60,255}"),
    *_scan("gitlab-token", "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glptt-", r"[A-Za-z0-9_-]{20,50}(?![\w-])"),
    *_scan("slack-token", "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", r"[A-Za-z0-9-]{10,250}"),
    Rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]{20,}"),
    Rule("discord-webhook", r"/api/webhooks/\d+/([A-Za-z0-9_-]{30,})", group=1),
    *_scan("stripe-key", "sk_live_", "rk_live_", "pk_live_", "sk_test_", "rk_test_", r"[0-9A-Za-z]{16,247}"),
    *_scan("stripe-webhook-secret", "whsec_", r"[0-9A-Za-z]{24,}"),
    *_scan("sendgrid-key", "SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    Rule(
        "mailchimp-key", r"(?<![0-9a-z])[0-9a-f]{32}-us\d{1,2}(?!\w)", "window", triggers=("-us",), back=32, forward=8
    ),
    *_scan("anthropic-key", "sk-ant-", r"(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{20,}"),
    *_scan("openai-key", "sk-", r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
    *_scan("openai-key", "sk-proj-", "sk-svcacct-", "sk-admin-", r"[A-Za-z0-9_-]{40,}"),
    *_scan("openrouter-key", "sk-or-v1-", r"[a-f0-9]{40,}"),
    *_scan("groq-key", "gsk_", r"[A-Za-z0-9]{40,}"),
    *_scan("xai-key", "xai-", r"[A-Za-z0-9]{40,}"),
    *_scan("replicate-token", "r8_", r"[A-Za-z0-9]{30,}"),
    *_scan("huggingface-token", "hf_", r"[A-Za-z0-9]{30,}"),
    *_scan("perplexity-key", "pplx-", r"[A-Za-z0-9]{40,}"),
    *_scan("nvidia-key", "nvapi-", r"[A-Za-z0-9_-]{40,}"),
    *_scan("npm-token", "npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    *_scan("pypi-token", "pypi-AgE", r"[A-Za-z0-9_-]{50,}"),
    *_scan("rubygems-key", "rubygems_", r"[a-f0-9]{48}(?![a-f0-9])"),
    *_scan("docker-token", "dckr_pat_", r"[A-Za-z0-9_-]{20,}"),
    *_scan("vault-token", "hvs.", "hvb.", "hvr.", r"[A-Za-z0-9_-]{20,}"),
    Rule("azure-storage-key", r"AccountKey=([A-Za-z0-9+/]{86}==)", group=1),
    Rule("azure-sas", r"sig=(?<=[?&]sig=)([A-Za-z0-9%+/]{30,}(?:%3D|=)*)", group=1),
    *_scan("shopify-token", "shpat_", "shpss_", "shpca_", "shppa_", r"[a-fA-F0-9]{32}(?![a-fA-F0-9])"),
    *_scan("digitalocean-token", "dop_v1_", "doo_v1_", "dor_v1_", r"[a-f0-9]{64}(?![a-f0-9])"),
    *_scan("databricks-token", "dapi", r"[a-f0-9]{32}(?:-\d)?(?![a-f0-9])"),
    *_scan("square-token", "sq0atp-", "sq0csp-", r"[0-9A-Za-z_-]{22,43}"),
    *_scan("linear-key", "lin_api_", "lin_oauth_", r"[A-Za-z0-9]{40}(?![A-Za-z0-9])"),
    *_scan("age-secret-key", "AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Rule(
        "telegram-bot-token",
        r"(?<!\d)\d{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])",
        "window",
        triggers=(":AA",),
        back=10,
    ),
    *_scan("jwt", "eyJ", r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # a password in a URL: scheme://user:PASSWORD@host (redis://:PASSWORD@host too)
    Rule(
        "url-password",
        r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'`\\]{0,80}:([^\s/@\"'`\\]{3,200})@[A-Za-z0-9.\[-]",
        "window",
        1,
        ("://",),
        back=24,
        forward=300,
    ),
    # Authorization headers and their kin: Bearer and Basic values, token headers
    Rule("bearer-token", r"bearer\s+([A-Za-z0-9._~+/=-]{16,})", "keyword", 1, ("bearer",), flags=re.I),
    Rule("basic-auth", r"basic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])", "keyword", 1, ("basic",), flags=re.I),
    Rule(
        "auth-header",
        r"(?:x-api-key|api-key|x-auth-token|auth-token|private-token|x-goog-api-key|authorization)"
        r"\s*[:=]\s*" + _Q + r"(?!(?i:bearer|basic)\s)([A-Za-z0-9._~+/=-]{16,})",
        "keyword",
        1,
        ("api-key", "auth-token", "private-token", "authorization"),
        back=8,
        flags=re.I,
    ),
    # NAME=value (.env, shell exports, YAML, JSON in a text) where the name says secret; the
    # match opens at the keyword inside the name (DB_PASSWORD: at PASSWORD)
    Rule(
        "env-secret",
        _KEYWORD_RE + r"[A-Za-z0-9_.-]*" + _Q + r"[ \t]*(?:=|:)[ \t]*" + _Q + _VALUE,
        "keyword",
        1,
        _KEYWORDS,
    ),
    # bare high-entropy hex or base64 right after a word that says secret
    Rule(
        "high-entropy-secret",
        _KEYWORD_RE
        + r"[^\n\\]{0,12}?(?<![A-Za-z0-9/+])([A-Fa-f0-9]{32,}|[A-Za-z0-9+/_-]{32,}={0,2})(?![A-Za-z0-9/+=])",
        "keyword",
        1,
        _KEYWORDS,
    ),
    # personal data
    # local@domain: a local part of 1 to 64 of its characters (no more run on before it)
    Rule(
        "email",
        r"@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])",
        "at",
        triggers=("@",),
        back=64,
        before="A-Za-z0-9._%+-",
    ),
    *_scan("private-ip", "10.", r"(?:\d{1,3}\.){2}\d{1,3}(?![\d.]*\d)"),
    *_scan("private-ip", "192.168.", r"\d{1,3}\.\d{1,3}(?![\d.]*\d)"),
    Rule("private-ip", r"172\.(?<![\d.]172\.)(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}(?![\d.]*\d)"),
    Rule("private-ip", r"100\.(?<![\d.]100\.)(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d{1,3}\.\d{1,3}(?![\d.]*\d)"),
    Rule("phone", r"\+(?<![\w+]\+)[1-9]\d{0,2}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4}(?!\w)"),
    Rule("phone", r"\((?<![\w(]\()\d{3}\)[ ]?\d{3}-\d{4}(?!\d)"),
    Rule(
        "host",
        r"(?<![A-Za-z0-9-])(?:[A-Za-z0-9-]{1,63}\.)+(?:local|lan|internal|intranet|corp|home\.arpa)(?![A-Za-z0-9-]|\.[A-Za-z])",
        "window",
        triggers=(".local", ".lan", ".internal", ".intranet", ".corp", ".home.arpa"),
        back=255,
        forward=20,
    ),
]

# the literals whose places a caller may ask for from the rules' pass: the prefixes of a home
# folder (a user name follows; in a JSON text a Windows path's backslash is escaped)
PLACES = (b"/home/", b"/Users/", b"Users\\\\")

PERSONAL_KINDS = {"user", "email", "host", "private-ip", "phone"}
# --keep names a category or a kind; the categories
CATEGORIES = {
    "secrets": {rule.kind for rule in RULES if rule.kind not in PERSONAL_KINDS},
    "paths": {"user"},
    "emails": {"email"},
    "hosts": {"host"},
    "ips": {"private-ip"},
    "phones": {"phone"},
}
# values that look like data of a kind but are the clients' own or a documentation example
ALLOWED = re.compile(
    r"(?i)^(?:noreply@anthropic\.com|noreply@github\.com|openhands@all-hands\.dev|vibe@mistral\.ai|git@[\w.-]+|[^@]+@(?:example\.(?:com|org|net)"
    r"|users\.noreply\.github\.com)|AKIAIOSFODNN7EXAMPLE|wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)$"
)

# detect-secrets' regex plugins that join in, each searched around its trigger literals
# (window mode): (triggers, back, forward). Its entropy and keyword plugins are left out (they
# flag the ids, hashes and signatures every transcript holds: docs/redact.md#what-it-finds), and
# so are the plugins whose shapes have no literal to look for (Cloudant, IBM, SoftLayer,
# Discord, Artifactory; the env-secret rule finds their NAME=value lines), its public IP
# plugin (addresses in documentation and output are no one's) and Twilio's (a SID is an id).
LIBRARY_TRIGGERS: dict[str, tuple[tuple[str, ...], int, int]] = {
    "AWSKeyDetector": (("AKIA", "ASIA", "ABIA", "ACCA", "A3T", "aws_", "AWS_"), 24, 120),
    "AzureStorageKeyDetector": (("AccountKey=",), 0, 110),
    "BasicAuthDetector": (("://",), 100, 300),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), 0, 80),
    "GitLabTokenDetector": (("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "GR1348941", "glcbt-"), 0, 80),
    "JwtTokenDetector": (("eyJ",), 0, 4000),
    "MailchimpDetector": (("-us",), 32, 8),
    "NpmDetector": (("_authToken",), 200, 200),
    "OpenAIDetector": (("T3BlbkFJ",), 120, 40),
    "PrivateKeyDetector": (("PRIVATE KEY",), 20, 20),
    "PypiTokenDetector": (("pypi-",), 0, 300),
    "SendGridDetector": (("SG.",), 0, 80),
    "SlackDetector": (("xox", "hooks.slack"), 30, 300),
    "SquareOAuthDetector": (("sq0csp-",), 0, 60),
    "StripeDetector": (("k_live_",), 2, 60),
    "TelegramBotTokenDetector": ((":AA",), 10, 40),
}


class MissingExtra(InputError):
    """An optional dependency is not installed."""


def library_rules() -> list[Rule]:
    """detect-secrets' regex plugins as rules: the well-kept list of token shapes."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:
        raise MissingExtra(f"redaction needs detect-secrets: {EXTRA}") from None
    rules = []
    for secret_type, plugin in sorted(get_mapping_from_secret_type_to_class().items()):
        where = LIBRARY_TRIGGERS.get(plugin.__name__)
        if where is None:
            continue
        kind = "ds-" + re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
        triggers, back, forward = where
        for regex in plugin.denylist:
            rules.append(
                Rule(kind, regex.pattern, "window", -1 if regex.groups else 0, triggers, back, forward, regex.flags)
            )
    return rules


class Detector:
    """The rules, compiled. ``extra`` adds (kind, pattern) pairs (``.txcodec-redact.toml``,
    searched over the whole text), ``allow`` values never redacted, ``keep`` kinds or
    categories never redacted."""

    def __init__(
        self,
        extra: Iterable[tuple[str, str]] = (),
        allow: Iterable[str] = (),
        allow_patterns: Iterable[str] = (),
        keep: Iterable[str] = (),
        library: bool = True,
    ) -> None:
        kept: set[str] = set()
        for name in keep:
            kept |= CATEGORIES.get(name, {name})
        self.kept = kept
        rules = [rule for rule in RULES if rule.kind not in kept]
        if library and "secrets" not in keep:
            rules += [rule for rule in library_rules() if rule.kind not in kept]
        for kind, pattern in extra:
            try:
                groups = re.compile(pattern).groups
            except re.error as exc:
                raise InputError(f"redact pattern {kind!r} is not a regular expression: {exc}") from None
            rules.append(Rule(str(kind), pattern, group=1 if groups else 0))
        self.rules = rules
        self._raw: Any = None  # the bytes engine, built on first use (raw_spans)
        self.allow = set(allow)
        try:
            self.allow_re = [re.compile(p) for p in allow_patterns]
        except re.error as exc:
            raise InputError(f"redact allow pattern is not a regular expression: {exc}") from None

    def allowed(self, value: str, kind: str) -> bool:
        return (
            value in self.allow
            or ALLOWED.match(value) is not None
            or (kind in BY_CONTEXT and _NOT_A_VALUE.match(value) is not None)
            or any(p.search(value) for p in self.allow_re)
        )

    def raw_spans(self, data: bytes, places: dict[bytes, list[int]] | None = None) -> list[tuple[int, int, str]]:
        """The findings in a file's raw bytes, as byte offsets, overlaps merged; ``places`` gets
        where the literals in :data:`PLACES` are (found in the same pass)."""
        if self._raw is None:
            self._raw = _RawEngine(self.rules, PLACES)
        found = [
            (start, end, kind)
            for start, end, kind in self._raw.matches(data, places)
            if end - start >= 3 and not self.allowed(data[start:end].decode("utf-8", "replace"), kind)
        ]
        return merge(found)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """The (start, end, kind) of every finding in ``text``, overlaps merged: found by the
        bytes engine in its UTF-8 (one automaton pass, however long the text), the offsets
        then counted in characters."""
        data = text.encode("utf-8", "surrogatepass")
        found = self.raw_spans(data)
        if not found or len(data) == len(text):
            return found
        return merge([(_chars(data, start), _chars(data, end), kind) for start, end, kind in found if end > start])


class _RawEngine:
    """The rules over a file's raw bytes: every trigger (a scan rule's prefix, a window's
    literal; a keyword in the lowered bytes) found in one pass of an Aho-Corasick automaton
    (ahocorasick-rs), then each rule tried only where its trigger is. ``places``: literals
    whose places a caller wants from the same pass (the home folders' prefixes)."""

    def __init__(self, rules: list[Rule], places: Iterable[bytes] = ()) -> None:
        try:
            import ahocorasick_rs
        except ImportError:
            raise MissingExtra(f"redaction needs ahocorasick-rs: {EXTRA}") from None
        self.always: list[tuple[str, re.Pattern[bytes], int]] = []
        self.scan: dict[bytes, list[tuple[str, re.Pattern[bytes], int]]] = {}
        self.keyword: dict[bytes, list[tuple[str, re.Pattern[bytes], int]]] = {}
        self.window: dict[bytes, list[tuple[str, re.Pattern[bytes], int, int, int]]] = {}
        self.at: dict[bytes, list[tuple[str, re.Pattern[bytes], re.Pattern[bytes], int]]] = {}
        self.wanted = tuple(places)
        for rule in rules:
            compiled = re.compile(rule.pattern.encode("utf-8"), rule.flags & ~re.UNICODE if rule.flags else 0)
            if rule.mode == "scan":
                literal = _prefix(rule.pattern)
                if literal:
                    self.scan.setdefault(literal.encode(), []).append((rule.kind, compiled, rule.group))
                else:
                    self.always.append((rule.kind, compiled, rule.group))
            elif rule.mode == "keyword":
                for word in rule.triggers:
                    self.keyword.setdefault(word.encode(), []).append((rule.kind, compiled, rule.group))
            elif rule.mode == "at":
                # the head read backwards: at most one character more than it may hold, so that a
                # longer run (no match) is told from a full one
                head = re.compile(f"[{rule.before}]{{0,{rule.back + 1}}}".encode())
                for word in rule.triggers:
                    self.at.setdefault(word.encode(), []).append((rule.kind, compiled, head, rule.back))
            else:
                for word in rule.triggers:
                    self.window.setdefault(word.encode(), []).append(
                        (rule.kind, compiled, rule.group, rule.back, rule.forward)
                    )
        # a one-character prefix (a phone number's ``+`` or ``(``) is in most texts many times:
        # found with ``bytes.find`` (its first place is all a scan needs), not listed by the automaton
        self.short = [prefix for prefix in self.scan if len(prefix) < 2]
        self.cased = list(dict.fromkeys([*(p for p in self.scan if len(p) >= 2), *self.window, *self.at, *self.wanted]))
        # Keywords are found leftmost-longest, without overlaps (``api_key`` once, not also its
        # ``key``: each keyword rule's pattern opens with any keyword), and a record's own
        # members (``"output_tokens":``, ``"key":``) are swallowed by decoys that name no rule:
        # every assistant line of a Claude Code file has five of them.
        self.lowered = list(self.keyword) + [decoy for decoy in _DECOYS if decoy not in self.keyword]
        self.cased_ac = ahocorasick_rs.BytesAhoCorasick(self.cased) if self.cased else None
        self.lowered_ac = (
            ahocorasick_rs.BytesAhoCorasick(self.lowered, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
            if self.keyword
            else None
        )

    def matches(self, data: bytes, found: dict[bytes, list[int]] | None = None) -> Iterator[tuple[int, int, str]]:
        """The rules' matches in ``data``; ``found`` gets the places of the wanted literals."""
        for kind, pattern, group in self.always:
            for match in pattern.finditer(data):
                yield from _groups(match, group, kind)  # type: ignore[arg-type]
        places: dict[bytes, list[int]] = {}
        for prefix in self.short:
            first = data.find(prefix)
            if first >= 0:
                places[prefix] = [first]
        if self.cased_ac is not None:
            for index, start, _ in self.cased_ac.find_matches_as_indexes(data, overlapping=True):
                places.setdefault(self.cased[index], []).append(start)
        for word, at in places.items():
            for kind, pattern, group in self.scan.get(word, ()):
                if len(word) < 2:  # only its first place is known: the pattern searches on from there
                    for match in pattern.finditer(data, at[0]):
                        yield from _groups(match, group, kind)  # type: ignore[arg-type]
                    continue
                end = -1  # tried at each place the automaton found (a match does not start inside another)
                for place in at:
                    if place < end:
                        continue
                    match = pattern.match(data, place)
                    if match is not None:
                        end = match.end()
                        yield from _groups(match, group, kind)  # type: ignore[arg-type]
            for kind, pattern, group, back, forward in self.window.get(word, ()):
                for low, high in _windows(at, back, forward + len(word), len(data)):
                    for match in pattern.finditer(data, low, high):
                        yield from _groups(match, group, kind)  # type: ignore[arg-type]
            for kind, pattern, head, longest in self.at.get(word, ()):
                for place in at:
                    match = pattern.match(data, place)
                    if match is None:
                        continue
                    size = head.match(data[max(0, place - longest - 1) : place][::-1]).end()  # type: ignore[union-attr]
                    if 0 < size <= longest:
                        yield place - size, match.end(), kind
        if found is not None:
            for word in self.wanted:
                if word in places:
                    found[word] = places[word]
        if self.lowered_ac is not None:
            for index, start, _ in self.lowered_ac.find_matches_as_indexes(data.lower()):
                for kind, pattern, group in self.keyword.get(self.lowered[index], ()):
                    match = pattern.match(data, start)
                    if match is not None:
                        yield from _groups(match, group, kind)  # type: ignore[arg-type]


_DECOYS = (b'tokens":', b'token":', b'key":', b'keys":')


def _prefix(pattern: str) -> str:
    """The literal a pattern opens with ("" when it opens otherwise)."""
    literal = re.match(r"(?:[^\\.^$*+?{}\[\]|()]|\\[^A-Za-z0-9])+", pattern)
    return re.sub(r"\\(.)", r"\1", literal.group()) if literal else ""


def _chars(data: bytes, offset: int) -> int:
    """A byte offset in UTF-8 as a character offset (a cut inside a character: before it)."""
    return len(data[:offset].decode("utf-8", "ignore"))


def _windows(places: list[int], back: int, forward: int, size: int) -> Iterator[tuple[int, int]]:
    """The windows around ``places``, those that overlap joined."""
    low, high = max(0, places[0] - back), min(size, places[0] + forward)
    for place in places[1:]:
        start = max(0, place - back)
        if start <= high:
            high = min(size, place + forward)
            continue
        yield low, high
        low, high = start, min(size, place + forward)
    yield low, high


def _groups(match: re.Match[str], group: int, kind: str) -> Iterator[tuple[int, int, str]]:
    if group >= 0:
        start, end = match.span(group)
        if start >= 0:
            yield start, end, kind
        return
    spans = [match.span(i) for i in range(1, (match.re.groups or 0) + 1) if match.group(i)]
    for start, end in spans or [match.span(0)]:
        yield start, end, kind


def merge(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping findings as one span (the kind of the longest), in order."""
    if not found:
        return found
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    merged = [found[0]]
    for start, end, kind in found[1:]:
        last_start, last_end, last_kind = merged[-1]
        if start < last_end:
            if end > last_end:
                longer = kind if end - start > last_end - last_start else last_kind
                merged[-1] = (last_start, end, longer)
            continue
        merged.append((start, end, kind))
    return merged
