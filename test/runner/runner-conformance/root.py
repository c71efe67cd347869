print('{"where": "root"}')
