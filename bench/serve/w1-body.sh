#!/usr/bin/env bash
# The body of `POST /v1/run` w1 on stdout: bench/workloads/w1 as the server's run request, under
# the built-in default policy. Run from the repository's root.
set -euo pipefail
python3 -c 'import json; s=open("bench/workloads/w1.main.js").read()+"\nexport default main;\n"; print(json.dumps({"policy":"default","script":{"name":"w1.js","source":s},"input":json.load(open("bench/workloads/w1.input.json"))}))'
