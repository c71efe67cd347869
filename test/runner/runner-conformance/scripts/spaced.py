print("\n  {\"ok\": true}  \n")
