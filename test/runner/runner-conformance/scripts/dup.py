print('{"where": "scripts"}')
