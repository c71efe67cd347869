#!/usr/bin/env python3
# fixture: an encoded payload decoded and run
import base64
exec(base64.b64decode("cHJpbnQoJ2hlbGxvJyk="))
