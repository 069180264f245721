//! An operator's catalog file replaces the built-in one: its engines are the live set.

use service::AppConfig;
use storage::test_support::TestDatabase;

#[tokio::test]
async fn an_operator_catalog_replaces_the_builtin_one() {
    let dir = std::env::temp_dir().join(storage::new_id("catalog-override"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("catalog.json");
    std::fs::write(
        &file,
        r#"{"engines": [{"id": "tts", "family": "text_to_speech", "title": "Speech at a corrected price",
            "inputs": {"prompt": "required"}, "price": {"per": "thousand_chars", "usd": "0.0200"}}]}"#,
    )
    .unwrap();
    let db = TestDatabase::sqlite().unwrap();
    let mut config = AppConfig::from_settings([]).unwrap();
    config.output_dir = dir.join("outputs").display().to_string();
    config.engine_catalog_file = Some(file.display().to_string());
    let service = config.build_service_on(db.db.clone()).unwrap();

    let models = service.api().list_models().models;
    assert_eq!(models.len(), 1);
    assert_eq!((models[0].id.as_str(), models[0].price.usd.to_string().as_str()), ("tts", "0.0200"));
    service.operator().create_account("ops", false).await.unwrap();
    let secret = service.operator().create_key("ops", None, None).await.unwrap().secret;
    let caller = service.api().authenticate(Some(&secret)).await.unwrap();
    let gone = serde_json::from_value(serde_json::json!({"model": "beta-image", "prompt": "x"})).unwrap();
    assert!(matches!(service.api().submit(&caller, gone).await, Err(service::ServiceError::UnknownModel(_))));
    let speech = serde_json::from_value(serde_json::json!({"model": "tts", "prompt": "hello"})).unwrap();
    assert_eq!(service.api().submit(&caller, speech).await.unwrap().price_usd.to_string(), "0.0200");

    config.engine_catalog_file = Some(dir.join("missing.json").display().to_string());
    assert!(config.build_service_on(db.db.clone()).is_err(), "a broken catalog stops the start");
    let _ = std::fs::remove_dir_all(&dir);
}
