#!/usr/bin/env python3
"""Generates the key material and seeds of fuzz_jwt and fuzz_jwks.

Makes fresh keys (RSA 2048 for RS256 and PS256, EC P-256, P-384 and P-521,
Ed25519), writes their public JWKS and a few tokens signed with them into
tests/fuzz/jwt_keys.h, and real tokens and JWKS documents into
tests/fuzz/corpus/fuzz_jwt/ and corpus/fuzz_jwks/. The private keys are
never written anywhere: rerunning makes a new set, header and seeds
together. Needs python3-cryptography. Run from anywhere:
    python3 tests/fuzz/jwt_seeds.py
"""
import base64
import copy
import hashlib
import hmac
import json
import os
import shutil
import subprocess

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import \
    decode_dss_signature

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

ISS = "https://auth.example.com"
RES = "https://mcp.example.com/mcp"
SECRET = "fuzz-hs256-secret-0123456789abcdef-0123456789"
EXP = 4102444800  # 2100-01-01
IAT = 1700000000


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n, size=None):
    size = size or (n.bit_length() + 7) // 8
    return b64u(n.to_bytes(size, "big"))


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


class Key:
    def __init__(self, kid, alg, priv):
        self.kid, self.alg, self.priv = kid, alg, priv

    def jwk(self):
        pub = self.priv.public_key()
        if isinstance(pub, rsa.RSAPublicKey):
            n = pub.public_numbers()
            j = {"kty": "RSA", "n": uint(n.n), "e": uint(n.e)}
        elif isinstance(pub, ec.EllipticCurvePublicKey):
            n = pub.public_numbers()
            size = (pub.curve.key_size + 7) // 8
            crv = {"secp256r1": "P-256", "secp384r1": "P-384",
                   "secp521r1": "P-521"}[pub.curve.name]
            j = {"kty": "EC", "crv": crv, "x": uint(n.x, size),
                 "y": uint(n.y, size)}
        else:
            raw = pub.public_bytes(serialization.Encoding.Raw,
                                   serialization.PublicFormat.Raw)
            j = {"kty": "OKP", "crv": "Ed25519", "x": b64u(raw)}
        j["use"] = "sig"
        j["alg"] = self.alg
        if self.kid is not None:
            j["kid"] = self.kid
        return j

    def sign(self, data, alg=None):
        alg = alg or self.alg
        bits = {"256": hashes.SHA256(), "384": hashes.SHA384(),
                "512": hashes.SHA512()}
        if alg.startswith("RS"):
            return self.priv.sign(data, padding.PKCS1v15(), bits[alg[2:]])
        if alg.startswith("PS"):
            h = bits[alg[2:]]
            return self.priv.sign(data, padding.PSS(padding.MGF1(h),
                                                    h.digest_size), h)
        if alg.startswith("ES"):
            h = {"ES256": hashes.SHA256(), "ES384": hashes.SHA384(),
                 "ES512": hashes.SHA512()}[alg]
            der = self.priv.sign(data, ec.ECDSA(h))
            r, s = decode_dss_signature(der)
            size = (self.priv.curve.key_size + 7) // 8
            return r.to_bytes(size, "big") + s.to_bytes(size, "big")
        return self.priv.sign(data)


def make_keys():
    return [
        Key("rsa-1", "RS256", rsa.generate_private_key(65537, 2048)),
        Key("rsa-pss", "PS256", rsa.generate_private_key(65537, 2048)),
        Key("ec-256", "ES256", ec.generate_private_key(ec.SECP256R1())),
        Key("ec-384", "ES384", ec.generate_private_key(ec.SECP384R1())),
        Key("ec-521", "ES512", ec.generate_private_key(ec.SECP521R1())),
        Key("ed-1", "EdDSA", ed25519.Ed25519PrivateKey.generate()),
        Key(None, "ES256", ec.generate_private_key(ec.SECP256R1())),
    ]


def claims(**over):
    c = {"iss": ISS, "aud": RES, "sub": "user-1", "exp": EXP, "iat": IAT,
         "scope": "data:read data:write"}
    for k, v in over.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def token(key, payload, header=None, alg=None, sig=None, secret=SECRET):
    h = {"alg": alg or (key.alg if key else "HS256"), "typ": "JWT"}
    if key is not None and key.kid is not None:
        h["kid"] = key.kid
    if header:
        h.update(header)
    h = {k: v for k, v in h.items() if v is not None}
    signing = (b64u(compact(h)) + "." + b64u(compact(payload))).encode()
    if sig is None:
        if key is None:
            sig = hmac.new(secret.encode(), signing, hashlib.sha256).digest()
        else:
            sig = key.sign(signing, alg)
    return signing.decode() + "." + b64u(sig)


def c_string(text, indent="    "):
    """A C string literal split into lines of at most 76 characters."""
    out, line = [], ""
    for ch in text:
        piece = {'"': '\\"', "\\": "\\\\"}.get(ch, ch)
        if len(line) + len(piece) > 72:
            out.append(indent + '"' + line + '"')
            line = ""
        line += piece
    out.append(indent + '"' + line + '"')
    return "\n".join(out)


def write_header(jwks_text, tokens):
    lines = [
        "/* Generated by jwt_seeds.py: the public key set fuzz_jwt, fuzz_jwks",
        " * and fuzz_http verify against, and tokens signed with its keys. The",
        " * private keys were thrown away; rerun the script for a new set",
        " * (header and seeds together). */",
        "#ifndef FUZZ_JWT_KEYS_H",
        "#define FUZZ_JWT_KEYS_H",
        "",
        '#define FUZZ_ISSUER "%s"' % ISS,
        '#define FUZZ_RESOURCE "%s"' % RES,
        '#define FUZZ_HS256_SECRET "%s"' % SECRET,
        "",
        "static const char fuzz_jwks[] =",
        c_string(jwks_text) + ";",
        "",
        "/* One valid token per key (expiring in 2100), then the HS256 one. */",
        "static const char *const fuzz_tokens[] = {",
    ]
    for t in tokens:
        lines.append(c_string(t, "    ") + ",")
    lines += ["    NULL};", "", "#endif", ""]
    path = os.path.join(HERE, "jwt_keys.h")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    subprocess.run(["clang-format", "-i", path], check=False)


def reset(target):
    d = os.path.join(CORPUS, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def put(d, name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def jwt_seeds(keys):
    """fuzz_jwt input: an options byte, then either a token (bit 7 clear)
    or header JSON, NUL, payload JSON to be signed with the HS256 secret
    (bit 7 set). Bits 0-1 pick the verifier (see fuzz_jwt.c)."""
    d = reset("fuzz_jwt")
    rsa1, pss, ec256, ec384, ec521, ed, nokid = keys
    raw = {}
    for k in keys:
        raw["good-%s" % (k.kid or "nokid")] = token(k, claims())
    raw.update({
        "good-hs256": token(None, claims()),
        "rs384-same-key": token(rsa1, claims(), alg="RS384"),
        "ps512": token(pss, claims(), alg="PS512"),
        "rs512-pinned-rs256": token(rsa1, claims(), alg="RS512"),
        "expired": token(ec256, claims(exp=IAT)),
        "no-exp": token(ec256, claims(exp=None)),
        "nbf-future": token(ec256, claims(nbf=EXP - 10)),
        "iat-future": token(ec256, claims(iat=EXP - 10)),
        "exp-string": token(ec256, claims(exp="4102444800")),
        "exp-huge": token(rsa1, claims(exp=10 ** 26)),
        "exp-float": token(rsa1, claims(exp=4102444800.5)),
        "aud-array": token(ed, claims(aud=["other", RES])),
        "aud-wrong": token(ed, claims(aud="https://other.example/mcp")),
        "aud-missing": token(ed, claims(aud=None)),
        "iss-slash": token(ed, claims(iss=ISS + "/")),
        "scope-array-scp": token(rsa1, claims(scope=None,
                                              scp=["data:read", "admin"])),
        "at-jwt": token(ec384, claims(), header={"typ": "at+jwt"}),
        "unknown-kid": token(ec256, claims(), header={"kid": "nobody"}),
        "kid-traversal": token(ec256, claims(),
                               header={"kid": "../../dev/null"}),
        "jku": token(rsa1, claims(), header={"jku": "https://evil/jwks"}),
        "crit": token(rsa1, claims(), header={"crit": ["exp"]}),
        "sub-long": token(ec521, claims(sub="s" * 300)),
        "none": token(None, claims(), alg="none", sig=b""),
        "None-case": token(None, claims(), alg="nOnE", sig=b""),
        "hs256-rsa-pem": token(None, claims(), header={"kid": "rsa-1"},
                               secret=rsa1.priv.public_key().public_bytes(
                                   serialization.Encoding.PEM,
                                   serialization.PublicFormat.
                                   SubjectPublicKeyInfo).decode()),
        "es256-short-sig": token(ec256, claims(), sig=b"\x01" * 63),
        "es256-zero-sig": token(ec256, claims(), sig=b"\x00" * 64),
        "rs256-tiny-sig": token(rsa1, claims(), sig=b"\x00\x00\x00"),
    })
    good = raw["good-rsa-1"]
    raw["five-segments"] = good + ".a.b"
    raw["padded"] = good + "=="
    raw["whitespace"] = " " + good
    for name, t in raw.items():
        put(d, name, b"\x00" + t.encode())
    put(d, "at-jwt-required", b"\x01" + raw["at-jwt"].encode())
    put(d, "jwks-only-hs256", b"\x02" + raw["good-hs256"].encode())
    put(d, "secret-only-rs256", b"\x03" + good.encode())

    signed = {
        "good": ({"alg": "HS256", "typ": "JWT"}, claims()),
        "at-jwt": ({"alg": "HS256", "typ": "at+jwt"},
                   claims(scp="data:read", scope=None)),
        "dup-alg": ('{"alg":"HS256","alg":"none"}', claims()),
        "aud-array": ({"alg": "HS256"}, claims(aud=[RES, "x"])),
        "nested": ({"alg": "HS256", "x": {"y": [1, 2, {"z": None}]}},
                   claims(extra={"a": [True, False, 1e5, -0.5]})),
        "nbf-iat": ({"alg": "HS256"}, claims(nbf=IAT, iat=IAT + 0.75)),
        "unicode": ({"alg": "HS256"}, claims(sub="\u00e9\U0001f600")),
        "not-object": ({"alg": "HS256"}, [1, 2]),
    }
    for name, (h, p) in signed.items():
        ht = h if isinstance(h, str) else compact(h).decode()
        pt = compact(p).decode()
        put(d, "sign-" + name, b"\x80" + ht.encode() + b"\x00" + pt.encode())
        put(d, "sign-at-" + name,
            b"\x81" + ht.encode() + b"\x00" + pt.encode())
    return [token(k, claims()) for k in keys] + [token(None, claims())]


def jwks_seeds(keys):
    """fuzz_jwks input: a JWKS document."""
    d = reset("fuzz_jwks")
    jwks = [k.jwk() for k in keys]
    put(d, "all", compact({"keys": jwks}))
    for k, j in zip(keys, jwks):
        put(d, "one-%s" % (k.kid or "nokid"), compact({"keys": [j]}))
    rsa1, ec256 = jwks[0], jwks[2]

    def variant(name, base, **over):
        j = copy.deepcopy(base)
        for key, v in over.items():
            if v is None:
                j.pop(key, None)
            else:
                j[key] = v
        put(d, name, compact({"keys": [j, jwks[5]]}))

    small = rsa.generate_private_key(65537, 1024).public_key().public_numbers()
    variant("rsa-1024", rsa1, n=uint(small.n))
    variant("oct", {"kty": "oct", "k": b64u(b"k" * 32), "kid": "o"})
    variant("private-d", rsa1, d=uint(12345678901234567890))
    variant("use-enc", rsa1, use="enc")
    variant("key-ops-sign", ec256, key_ops=["sign"])
    variant("key-ops-verify", ec256, key_ops=["verify"], use=None)
    variant("alg-mismatch", rsa1, alg="ES256")
    variant("alg-unknown", rsa1, alg="RS1")
    variant("alg-absent", ec256, alg=None)
    x = base64.urlsafe_b64decode(ec256["x"] + "==")
    variant("off-curve", ec256, x=b64u(bytes([x[0] ^ 1]) + x[1:]))
    variant("ec-short-x", ec256, x=b64u(x[1:]))
    variant("ec-wrong-crv", ec256, crv="P-384")
    variant("okp-x25519", jwks[5], crv="X25519")
    variant("kid-long", rsa1, kid="k" * 200)
    variant("x5c", rsa1, x5c=["MIIB"])
    variant("e-zero", rsa1, e="AA")
    variant("n-padded", rsa1, n="AA" + rsa1["n"])
    put(d, "dup-kid", compact({"keys": [jwks[2], dict(jwks[3],
                                                       kid="ec-256")]}))
    put(d, "too-many", compact({"keys": [jwks[6]] * 65}))
    put(d, "empty", b'{"keys":[]}')
    put(d, "not-array", b'{"keys":{}}')
    put(d, "dup-keys-member", b'{"keys":[],"keys":[]}')
    put(d, "single-jwk", compact(jwks[0]))
    return compact({"keys": jwks}).decode()


def main():
    keys = make_keys()
    tokens = jwt_seeds(keys)
    jwks_text = jwks_seeds(keys)
    write_header(jwks_text, tokens)
    for t in ("fuzz_jwt", "fuzz_jwks"):
        print(t, len(os.listdir(os.path.join(CORPUS, t))))


if __name__ == "__main__":
    main()
