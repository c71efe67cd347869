print('{}'); print('{}')
