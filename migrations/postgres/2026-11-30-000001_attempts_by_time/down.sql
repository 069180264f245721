DROP INDEX console_attempts_by_time;
