#!/usr/bin/env bash
# Ask for a premium resource without paying: the answer is 402 with the payment requirements, base64 JSON in the
# PAYMENT-REQUIRED header (the same object is in the body). Needs curl, base64 and jq.
#   bash see-the-402.sh https://YOUR.SITE/api/x402-market-regime.php
set -euo pipefail
url="${1:?usage: see-the-402.sh URL}"
curl -s -D - -o /dev/null "$url" | tr -d '\r' | grep -i '^payment-required:' | cut -d' ' -f2 | base64 -d |
  jq '{x402Version, resource: .resource.url, accepts: [.accepts[] | {scheme, network, asset, amount, payTo}]}'
