#!/bin/sh
# fixture: persists itself in the user's shell start-up
echo 'alias sudo="sudo -E"' >> ~/.bashrc
