#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# gen-certs.sh DIR [PORT]: test PKI for kpx-test-apiserver.py.
# Makes DIR/ca.{crt,key}, DIR/server.{crt,key} (SAN 127.0.0.1, ::1, localhost),
# DIR/client.{crt,key} (CN kpx-agent, signed by the CA), DIR/token, and
# DIR/kubeconfig (token) + DIR/kubeconfig-cert (client cert) for
# https://127.0.0.1:PORT (default 6443). The server also writes both
# kubeconfigs with its real port into its --dir.
set -eu

dir=${1:?usage: gen-certs.sh DIR [PORT]}
port=${2:-6443}
mkdir -p "$dir"
cd "$dir"
umask 077

key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=kpx-test-ca" \
	-addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.crt

cat > server.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
EXT
key server.key
openssl req -new -key server.key -subj "/CN=kpx-test-apiserver" -out server.csr
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-days 3650 -sha256 -extfile server.ext -out server.crt 2>/dev/null

cat > client.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EXT
key client.key
openssl req -new -key client.key -subj "/O=system:nodes/CN=kpx-agent" -out client.csr
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-days 3650 -sha256 -extfile client.ext -out client.crt 2>/dev/null
rm -f server.csr client.csr server.ext client.ext ca.srl

openssl rand -hex 24 > token
chmod 644 ca.crt server.crt client.crt token
chmod 600 ca.key server.key client.key

b64() { base64 -w0 < "$1"; }

kubeconfig() { # $1 = file, $2 = the user block
	cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kpx-test
  cluster:
    certificate-authority-data: $(b64 ca.crt)
    server: https://127.0.0.1:$port
users:
- name: kpx-agent
  user:
$2
contexts:
- name: kpx-test
  context:
    cluster: kpx-test
    user: kpx-agent
current-context: kpx-test
KC
}

kubeconfig kubeconfig "    token: $(cat token)"
kubeconfig kubeconfig-cert "    client-certificate-data: $(b64 client.crt)
    client-key-data: $(b64 client.key)"
echo "gen-certs.sh: wrote $dir (ca, server, client, token, kubeconfig, kubeconfig-cert)"
