//! The OpenAPI 3.1 description, generated from the handlers and types.

use crate::errors::ErrorBody;
use crate::{connector, listing_kit, oauth, routes, schema_rules};
use actix_web::HttpResponse;
use domain::listing_kit::{KitBrand, KitFont, KitParams, KitPhoto, Paper};
use domain::oauth::{ClientRegistration, OAuthError};
use domain::recipe::{ExportPreset, ImageFormat, ListingEnhanceParams, LotTraceParams, PixelPoint};
use domain::reel::{BrandColors, ListingDetails, ReelParams, ReelPhoto};
use domain::EngineSpec;
use domain::{
    GenerateRequest, IdempotencyKey, ListingEnhanceRequest, ListingKitRequest, LotTraceRequest, ReelRequest,
    WebhookEvent,
};
use recipes::listing_kit::captions::Captions;
use recipes::listing_kit::fair_housing::{Category, Finding};
use recipes::lot_trace::measure::{CentroidView, Measurement, Side};
use service::oauth::{AuthorizationServerMetadata, ProtectedResourceMetadata, RegisteredClient, TokenResponse};
use service::views::{
    ChargeView, FairHousingReport, FlyerPieces, ListingKitResult, LotTraceResult, ModelList, ModelView, OutputView,
    PriceView, QueuedReel, QueuedTask, ReadinessChecks, ReadinessView, ReelView, SocialPieces, TaskView, UsageView,
    WebhookAttemptView, WebhookDeliveryList, WebhookDeliveryView,
};
use service::ErrorCode;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("API key: `Authorization: Bearer <API_KEY>`"))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Media Generation API",
        version = "1.0.0",
        description = "Image, video and audio generation on named engines, metered in USD. Submit a job \
            (202 with a task id), poll the task until `succeeded` or `failed`, then download the outputs."
    ),
    paths(
        routes::generate, routes::listing_enhance, routes::lot_trace, listing_kit::listing_kit, routes::reel, routes::get_reel, routes::cancel_reel, routes::get_task, routes::cancel_task, routes::list_models, routes::usage, routes::webhook_deliveries, routes::download,
        connector::post, oauth::server_metadata, oauth::resource_metadata, oauth::register, oauth::token, oauth::revoke, routes::provider_callback, routes::health, routes::ready, routes::metrics
    ),
    components(schemas(
        GenerateRequest, ListingEnhanceRequest, ListingEnhanceParams, ExportPreset, ImageFormat, LotTraceRequest,
        LotTraceParams, PixelPoint, LotTraceResult, ReelRequest, ReelPhoto, ListingDetails, ReelParams, BrandColors, QueuedReel, ReelView, Measurement, Side, CentroidView, QueuedTask, TaskView, OutputView, ModelList, ModelView, PriceView, UsageView, ChargeView,
        ListingKitRequest, KitPhoto, KitParams, KitBrand, KitFont, Paper, ListingKitResult, Captions, Finding, Category,
        FlyerPieces, SocialPieces, FairHousingReport, ErrorBody, ErrorCode, ReadinessView, ReadinessChecks, IdempotencyKey, ClientRegistration, OAuthError, RegisteredClient, TokenResponse,
        AuthorizationServerMetadata, ProtectedResourceMetadata,
        WebhookDeliveryList, WebhookDeliveryView, WebhookAttemptView, WebhookEvent
    )),
    modifiers(&BearerScheme),
    tags(
        (name = "Generation", description = "Run engines and poll tasks"),
        (name = "Models", description = "The live engines"),
        (name = "Billing", description = "Spend, caps and allowance"),
        (name = "Recipes", description = "Real-estate workflows on top of the engines"),
        (name = "Connector", description = "The MCP agent connector"),
        (name = "Providers", description = "Callbacks of the upstream providers"),
        (name = "Operations", description = "Liveness, readiness and metrics"),
    )
)]
struct ApiDoc;

/// The OpenAPI document as JSON, with the generate request described engine by engine from the
/// live catalog (`engines`).
pub fn openapi_json<'a>(engines: impl IntoIterator<Item = &'a EngineSpec>) -> String {
    let mut doc = match serde_json::to_value(ApiDoc::openapi()) {
        Ok(doc) => doc,
        Err(_) => return "{}".into(),
    };
    // Which inputs and params apply depends on `model`, which only the catalog knows.
    schema_rules::describe_engines(&mut doc, engines);
    schema_rules::describe_recipe_rules(&mut doc);
    schema_rules::describe_common_responses(&mut doc);
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into())
}

pub(crate) async fn serve(service: actix_web::web::Data<service::Service>) -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(openapi_json(service.engines().catalog().engines()))
}
