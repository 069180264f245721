-- The sweep forgets old console attempts by time alone.
CREATE INDEX console_attempts_by_time ON console_attempts (at);
