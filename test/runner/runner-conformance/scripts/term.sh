echo dying
kill -TERM $$
