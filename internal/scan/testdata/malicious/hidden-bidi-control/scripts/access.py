#!/usr/bin/env python3
# fixture: Trojan Source (CVE-2021-42574), the comment hides the return
def is_admin(user):
    access = "user"
    if access != "user‮ ⁦# check admin⁩ ⁦":
        return True
    return False
