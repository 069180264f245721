DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE task_webhooks;
DROP TABLE key_webhooks;
