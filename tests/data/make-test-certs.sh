#!/usr/bin/env bash
# Makes a throwaway PKI for the TLS tests in folder $1: two CAs, a server certificate for localhost and
# rpcscope.test (no IP name, so dialing 127.0.0.1 needs --cname), an expired one, and a client certificate.
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
days=2
quiet() { "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@"; exit 1; }; }

quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days "$days" -subj "/CN=rpcscope test CA"
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -days "$days" -subj "/CN=some other CA"

cat >server.ext <<'EXT'
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:rpcscope.test
EXT
cat >client.ext <<'EXT'
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
EXT

quiet openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=rpcscope.test"
quiet openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days "$days" -extfile server.ext
quiet openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=rpcscope test client"
quiet openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days "$days" -extfile client.ext

# Expired: `openssl ca` takes explicit validity dates (x509 -req only counts days from now).
mkdir -p ca-db
: >ca-db/index.txt
echo 1000 >ca-db/serial
cat >ca.cnf <<'CNF'
[ca]
default_ca = test
[test]
dir = ca-db
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
default_md = sha256
policy = anything
copy_extensions = none
[anything]
commonName = supplied
CNF
quiet openssl req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj "/CN=rpcscope.test"
quiet openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr -out expired.crt \
    -startdate 20200101000000Z -enddate 20200102000000Z -extfile server.ext
echo "certificates in $dir"
