"""Fake secrets of many families and personal data, planted in sessions' strings: the
redaction tests' input (tests/features/test_redact.py, the real-client resume of a redacted
session in tests/harnesses/claude_code/). Every value is made up here from hashes."""

from __future__ import annotations

import base64
import hashlib
import json

import msgspec

from txcodec.kit import registry

USER = "qlorpzyxwv"  # the planted user name: /home/qlorpzyxwv/…


def _b64(seed: str, n: int) -> str:
    out = b""
    while len(out) < n:
        out += hashlib.sha256((seed + str(len(out))).encode()).digest()
    return base64.b64encode(out).decode().replace("=", "")[:n]


def _hex(seed: str, n: int) -> str:
    out = ""
    while len(out) < n:
        out += hashlib.sha256((seed + str(len(out))).encode()).hexdigest()
    return out[:n]


def _alnum(seed: str, n: int, upper: bool = False) -> str:
    value = "".join(c for c in _b64(seed, n * 2) if c.isalnum())[:n]
    return value.upper() if upper else value


_PEM_BODY = "\\n".join(_b64(f"pem{i}", 64) for i in range(6))  # JSON-escaped line breaks in a text
# (family, the text planted, the secret values in it): each value is checked for, whole and by
# every 12-character fragment. Fake values, made up here from hashes.
FAMILIES: list[tuple[str, str, list[str]]] = []


def _family(name: str, template: str, *values: str) -> None:
    FAMILIES.append((name, template.format(*values), list(values)))


_family("aws-access-key-id", "aws configure set aws_access_key_id {0}", "AKIA" + _alnum("aws1", 16, upper=True))
_family("aws-secret-key", "aws_secret_access_key = {0}", _b64("aws2", 40))
_family("google-api-key", "GOOGLE_MAPS={0} in the config", "AIza" + _alnum("goog", 35))
_family("github-classic", "git remote set-url origin https://{0}@github.com/o/r", "ghp_" + _alnum("ghp", 36))
_family("github-fine-grained", "export GH={0}", "github_pat_" + _alnum("ghfg", 22) + "_" + _alnum("ghfg2", 59))
_family("gitlab-token", "glab auth login --token {0}", "glpat-" + _alnum("glpat", 20))
_family("slack-token", "SLACK_BOT={0} posted", "xoxb-" + _hex("slack", 12) + "-" + _alnum("slack2", 24))
_SLACK_HOOK = f"T{_alnum('sw', 10, True)}/B{_alnum('sw2', 10, True)}/{_alnum('sw3', 24)}"
_family("slack-webhook", "curl -X POST {0}", "https://hooks.slack.com/services/" + _SLACK_HOOK)
_family("stripe-key", "stripe.api_key = '{0}'", "sk_live_" + _alnum("stripe", 32))
_family("sendgrid-key", "sg = SendGridAPIClient('{0}')", "SG." + _alnum("sg1", 22) + "." + _alnum("sg2", 43))
_family("anthropic-key", "ANTHROPIC_API_KEY={0}", "sk-ant-api03-" + _alnum("ant", 93) + "AA")
_family("openai-key", 'client = OpenAI(api_key="{0}")', "sk-proj-" + _alnum("oai", 48))
_family("huggingface-token", "huggingface-cli login --token {0}", "hf_" + _alnum("hf", 34))
_family("npm-token", "//registry.npmjs.org/:_authToken={0}", "npm_" + _alnum("npm", 36))
_family("pypi-token", "twine upload -p {0}", "pypi-AgEIcHlwaS5vcmc" + _alnum("pypi", 60))
_family("vault-token", "vault login {0}", "hvs." + _alnum("vault", 90))
_family("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={0};", _b64("az", 86) + "==")
_family("url-password", "DATABASE_URL=postgres://app:{0}@db.example.com:5432/app", "Pg" + _alnum("pg", 14) + "!")
_family("redis-url-password", "redis-cli -u redis://:{0}@cache:6379", "Rd" + _alnum("redis", 18))
_family("env-password", "DB_PASSWORD={0}\\nDEBUG=1", "Hu" + _alnum("envpw", 12) + "#9")
_family("bearer", 'curl -H "Authorization: Bearer {0}" https://api.example.com', _alnum("bearer", 40))
_family("basic-auth", "Authorization: Basic {0}", _b64("basic", 32))
_family(
    "jwt",
    "token: {0}",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _alnum("jwt1", 30) + "." + _alnum("jwt2", 43),
)
_family(
    "pem-private-key",
    "cat id_rsa\\n{0}",
    "-----BEGIN RSA PRIVATE KEY-----\\n" + _PEM_BODY + "\\n-----END RSA PRIVATE KEY-----",
)
_family(
    "service-account-json",
    '{{"type": "service_account", "private_key_id": "{0}", "client_email": "svc@proj.iam.gserviceaccount.com"}}',
    _hex("sa", 40),
)
_family("high-entropy-hex", "SIGNING_SECRET={0}", _hex("hexsecret", 64))
_family("high-entropy-base64", "secret: {0}", _b64("b64secret", 44))
_family("twilio-auth-token", "TWILIO_AUTH_TOKEN={0}", _hex("twilio", 32))
_family("telegram-bot-token", "bot = Bot('{0}')", "7" + str(int(_hex("tg", 12), 16))[:9] + ":AA" + _alnum("tg2", 33))
_family("digitalocean-token", "doctl auth init -t {0}", "dop_v1_" + _hex("do", 64))
_family("docker-token", "docker login -p {0}", "dckr_pat_" + _alnum("dck", 27))
_family("databricks-token", "DATABRICKS_HOST=x DATABRICKS={0}", "dapi" + _hex("dbx", 32))
_family("email", "mail {0} about it", "qlorp.zyx@mailhost.io")
_family("phone", "call me at {0}", "+44 20 7946 0958")
_family("private-ip", "ssh admin@{0}", "10.23.47.191")
_family("host", "ping {0}", "buildbox-7.corp.internal")
_family("home-folder", "ls /home/{0}/work/notes.txt", USER)


def _plant_value(value, keep: frozenset, counter: list[int], key: str | None = None):
    """Append a family's text to each prose-like string (one with a space), cycling families."""
    if isinstance(value, dict):
        return {
            k: (
                f"/home/{USER}/work"
                if k == "cwd" and isinstance(v, str)
                else v
                if k in keep
                else _plant_value(v, keep, counter, k)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_plant_value(v, keep, counter, key) for v in value]
    if isinstance(value, str) and " " in value and len(value) >= 10:
        family = FAMILIES[counter[0] % len(FAMILIES)]
        counter[0] += 1
        return f"{value} {family[1]}"
    return value


def plant(data: bytes, harness: str) -> bytes:
    """The session with the families' texts planted in its strings, every line still JSON."""
    keep = frozenset(registry.get(harness).redact_keep) | {"type", "role", "id"}
    counter = [0]
    lines = data.split(b"\n")
    if data.lstrip()[:1] == b"{" and len(lines) > 2 and not lines[0].rstrip().endswith(b"}"):
        return msgspec.json.format(msgspec.json.encode(_plant_value(json.loads(data), keep, counter)), indent=2)
    out = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        out.append(
            json.dumps(_plant_value(value, keep, counter), ensure_ascii=False, separators=(",", ":")).encode(
                "utf-8", "surrogatepass"
            )
        )
    return b"\n".join(out)


def values() -> list[str]:
    """Every planted value, in each form a file may hold it (as planted in a string, escaped
    in the file's JSON, its escaped line breaks real ones in a text file)."""
    forms = []
    for _, _, values in FAMILIES:
        for value in values:
            forms += dict.fromkeys([value, json.dumps(value)[1:-1], value.replace("\\n", "\n")])
    return forms


def leaks(text: str) -> list[str]:
    """The planted values, or 12-character fragments of them, that ``text`` still holds."""
    found = []
    for value in values():
        if value in text:
            found.append(value[:4] + "…")
            continue
        if len(value) >= 12:
            for i in range(len(value) - 11):
                if value[i : i + 12] in text:
                    found.append(f"{value[:4]}…[{i}:{i + 12}]")
                    break
    return found
