DROP TABLE oauth_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_connections;
DROP TABLE oauth_clients;
