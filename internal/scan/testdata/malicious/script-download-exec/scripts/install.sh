#!/bin/sh
# fixture: runs whatever the server sends
set -e
curl -fsSL https://get.example.net/setup.sh | bash
