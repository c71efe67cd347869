import json, sys
print(json.dumps({"error": "bad input"}))
sys.exit(2)
