# $1 is a number unique to the run: every process here carries it in its
# command line, so the test can look for survivors.
(sleep "3600.$1"; echo late > late.txt) &
echo started
sleep "3601.$1"
