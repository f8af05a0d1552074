#!/usr/bin/env bash
# dev_token.sh: a development signing key, its JWKS and bearer tokens for
# trying a libmcp server's OAuth resource server without an authorization
# server. Uses only the openssl command line; nothing leaves the machine.
# Never use these keys or tokens for anything but local development.
#
#   dev_token.sh keys DIR
#       writes DIR/dev-key.pem (an RSA-2048 private key, mode 0600) and
#       DIR/jwks.json (its public half, key id "dev"), replacing both
#   dev_token.sh token DIR ISSUER AUDIENCE "SCOPE ..." [SECONDS]
#       prints an RS256 JWT signed with DIR/dev-key.pem: iss ISSUER,
#       aud AUDIENCE, sub "dev", the scopes, valid for SECONDS (default 3600)
set -euo pipefail

usage() {
  echo 'usage: dev_token.sh keys DIR' >&2
  echo '       dev_token.sh token DIR ISSUER AUDIENCE "SCOPE ..." [SECONDS]' >&2
  exit 2
}

# base64url without padding, of stdin.
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# Hex digits on stdin to bytes on stdout.
unhex() {
  local hex
  hex=$(tr -d ' \n')
  printf '%b' "$(printf '%s' "$hex" | sed 's/../\\x&/g')"
}

# A JSON string literal of $1 (quotes and backslashes escaped).
json_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

keys() {
  local dir=$1
  mkdir -p "$dir"
  (umask 077 && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
    -out "$dir/dev-key.pem" 2>/dev/null)
  local n
  n=$(openssl rsa -in "$dir/dev-key.pem" -noout -modulus | sed 's/^Modulus=//' |
    unhex | b64url)
  # The exponent openssl uses by default is 65537, "AQAB" in base64url.
  printf '{"keys":[{"kty":"RSA","kid":"dev","use":"sig","alg":"RS256","n":"%s","e":"AQAB"}]}\n' \
    "$n" >"$dir/jwks.json"
  echo "wrote $dir/dev-key.pem and $dir/jwks.json" >&2
}

token() {
  local dir=$1 issuer=$2 audience=$3 scopes=$4 ttl=${5:-3600}
  [ -f "$dir/dev-key.pem" ] || {
    echo "dev_token.sh: no $dir/dev-key.pem (run: dev_token.sh keys $dir)" >&2
    exit 1
  }
  case $ttl in '' | *[!0-9]*) usage ;; esac
  local now header payload signature
  now=$(date +%s)
  header=$(printf '{"alg":"RS256","typ":"at+jwt","kid":"dev"}' | b64url)
  payload=$(printf '{"iss":%s,"aud":%s,"sub":"dev","scope":%s,"iat":%d,"exp":%d}' \
    "$(json_string "$issuer")" "$(json_string "$audience")" \
    "$(json_string "$scopes")" "$now" "$((now + ttl))" | b64url)
  signature=$(printf '%s.%s' "$header" "$payload" |
    openssl dgst -sha256 -sign "$dir/dev-key.pem" -binary | b64url)
  printf '%s.%s.%s\n' "$header" "$payload" "$signature"
}

case ${1:-} in
keys) [ $# -eq 2 ] || usage; keys "$2" ;;
token) [ $# -eq 5 ] || [ $# -eq 6 ] || usage; token "${@:2}" ;;
*) usage ;;
esac
