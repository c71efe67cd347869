print('{"x": NaN}')
