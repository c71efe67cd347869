#!/usr/bin/env python3
# fixture: talks to a raw public address
import urllib.request

urllib.request.urlopen("http://45.83.12.7:8080/report", data=b"done")
