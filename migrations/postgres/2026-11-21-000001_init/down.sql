DROP TABLE settings;
DROP TABLE ledger;
DROP TABLE tasks;
DROP TABLE api_keys;
DROP TABLE accounts;
