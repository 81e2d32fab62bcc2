//! Writes: create (POST), update (PUT) and patch (PATCH), including the status
//! and scale subresources, dry-run and server-side field validation.

use super::body;
use super::negotiate::{respond, Output};
use super::query::FieldValidation;
use super::read::render;
use super::Call;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::{field_validation, type_check};
use crate::cpu;
use crate::patch::apply::{self, server_side_apply, Applier, ApplyError};
use crate::patch::{self, PatchType};
use crate::registry::{self, scale, UpdateOutcome};
use axum::body::Body;
use axum::response::Response;
use http::StatusCode;
use serde_json::{json, Value};

/// A decoded, checked request body and the warnings field validation produced.
struct Decoded {
    obj: Value,
    warnings: Vec<String>,
}

async fn decode_object(call: &Call<'_>, raw: Body) -> ApiResult<Decoded> {
    let bytes = body::read(raw).await?;
    cpu::heavy(|| {
        let ct = call.header(http::header::CONTENT_TYPE);
        let mut obj = body::decode_for(call.res, &bytes, ct, call.cat.schemas())?;
        let mut warnings = repeated_yaml_key(call, &bytes, ct)?;
        body::check_object(call.res, &mut obj, call.namespace())?;
        check_types(call, &mut obj)?;
        let json_bytes = body::as_json_bytes(&bytes, ct, &obj);
        warnings.extend(validate_fields(call, &json_bytes, &mut obj)?);
        Ok(Decoded { obj, warnings })
    })
}

/// A key a YAML body repeats: kube's strict YAML decoding refuses it under
/// fieldValidation=Strict and warns about it under Warn (the last value wins).
fn repeated_yaml_key(call: &Call<'_>, bytes: &[u8], ct: Option<&str>) -> ApiResult<Vec<String>> {
    if !body::media_type(ct).contains("yaml") {
        return Ok(Vec::new());
    }
    let strict = |repeated: &str| {
        format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: \
             yaml: unmarshal errors:\n  {repeated}",
            kind = call.res.kind,
            version = call.res.version,
        )
    };
    repeated_key_under(call, bytes, &strict)
}

/// The repeated key of a YAML body as `fieldValidation` wants it: `strict`
/// words the 400 of Strict, Warn gives it as a warning.
fn repeated_key_under(
    call: &Call<'_>,
    bytes: &[u8],
    strict: &dyn Fn(&str) -> String,
) -> ApiResult<Vec<String>> {
    // Parsing the body again is only worth it when the answer can use it.
    let validation = call.query.field_validation()?;
    if validation == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let Some(repeated) = crate::apimachinery::yaml::duplicate_key(bytes) else {
        return Ok(Vec::new());
    };
    match validation {
        FieldValidation::Strict => Err(ApiError::bad_request(strict(&repeated))),
        _ => Ok(vec![repeated]),
    }
}

/// The schema's types, as kube's decoding into Go structs checks them (400).
/// Custom resources decode into plain JSON: their CRD's schema validation
/// reports wrong types later, as kube's 422.
fn check_types(call: &Call<'_>, obj: &mut Value) -> ApiResult<()> {
    if call.res.custom.is_some() {
        return Ok(());
    }
    type_check::check(call.cat, call.res, obj).map_err(|e| {
        ApiError::bad_request(type_check::bad_request_message(
            &call.res.kind,
            &call.res.version,
            &e,
        ))
    })
}

/// The component schema of the scale subresource's body.
const SCALE_SCHEMA: &str = "io.k8s.api.autoscaling.v1.Scale";

/// A Scale body's types (400).
fn check_scale_types(call: &Call<'_>, scale: &mut Value) -> ApiResult<()> {
    let schemas = call.cat.schemas();
    type_check::check_schema(schemas, SCALE_SCHEMA, scale)
        .map_err(|e| ApiError::bad_request(type_check::bad_request_message("Scale", "v1", &e)))
}

/// A Scale PUT: its types, and its name against the URL's (400, worded as
/// kube's checkName).
fn check_scale(call: &Call<'_>, scale: &mut Value) -> ApiResult<()> {
    check_scale_types(call, scale)?;
    let body_name = meta::name(scale).unwrap_or_default();
    if body_name != call.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            call.name()
        )));
    }
    Ok(())
}

/// Server-side field validation: Strict fails, Warn warns, all drop unknown fields.
fn validate_fields(call: &Call<'_>, json_bytes: &[u8], obj: &mut Value) -> ApiResult<Vec<String>> {
    let mode = call.query.field_validation()?;
    let problems = match call.res.custom.as_ref().and_then(|c| c.compiled.as_ref()) {
        Some(schema) => custom_fields(call, schema, json_bytes, obj),
        None => field_validation::check(call.cat, call.res, json_bytes),
    };
    let found = !problems.unknown.is_empty() || !problems.duplicate.is_empty();
    if found && mode == FieldValidation::Strict {
        return Err(ApiError::bad_request(
            field_validation::bad_request_message(call.res, &problems),
        ));
    }
    if call.res.custom.is_none() {
        field_validation::prune_unknown(call.cat, call.res, obj);
    }
    Ok(if mode == FieldValidation::Warn {
        field_validation::warnings(&problems)
    } else {
        Vec::new()
    })
}

/// A custom resource as kube's decoder leaves it: pruned by its CRD
/// version's schema (the dropped fields are the unknown ones), defaulted.
fn custom_fields(
    call: &Call<'_>,
    schema: &crate::catalogue::custom::schema::CompiledSchema,
    json_bytes: &[u8],
    obj: &mut Value,
) -> field_validation::FieldProblems {
    let duplicate = field_validation::check(call.cat, call.res, json_bytes).duplicate;
    let unknown = schema.prune(obj);
    schema.apply_defaults(obj);
    field_validation::FieldProblems::from_paths(unknown, duplicate)
}

pub async fn create(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    if call.res.custom.as_ref().is_some_and(|c| c.terminating) {
        return Err(ApiError::method_not_allowed(
            "create not allowed while custom resource definition is terminating",
        ));
    }
    let d = decode_object(call, raw).await?;
    create_decoded(call, d, true).await
}

/// A create whose decoded object `prepare` changes (or refuses) first, for
/// kinds with rules about who creates them (CertificateSigningRequests).
pub(super) async fn create_prepared(
    call: &Call<'_>,
    raw: Body,
    prepare: &(dyn Fn(&mut Value) -> ApiResult<()> + Sync),
) -> ApiResult<Response> {
    let mut d = decode_object(call, raw).await?;
    prepare(&mut d.obj)?;
    create_decoded(call, d, true).await
}

/// Creates the decoded object; `tracked`: its create records an Update
/// entry in managedFields (a server-side apply records its own).
async fn create_decoded(call: &Call<'_>, d: Decoded, tracked: bool) -> ApiResult<Response> {
    let output = call.output()?;
    let mut opts = call.query.write_options()?;
    let admission = call.admission("CREATE", opts.dry_run);
    opts.admit = &admission;
    let manager = call.field_manager();
    if tracked {
        opts.tracking = Some(call.tracking(&manager));
    }
    call.query.check_field_manager()?;
    if meta::resource_version(&d.obj).is_some() {
        return Err(ApiError::internal(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let created = call
        .state
        .registry
        .create(call.res, call.namespace(), d.obj, opts)
        .await?;
    let body = render(call, output, vec![created], json!({}), true).await?;
    let warnings = [d.warnings, admission.take_warnings()].concat();
    Ok(respond(StatusCode::CREATED, &body, output, &warnings))
}

pub async fn update(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let output = call.output()?;
    let mut opts = call.query.write_options()?;
    let admission = call.admission("UPDATE", opts.dry_run);
    opts.admit = &admission;
    call.query.check_field_manager()?;
    let manager = call.field_manager();
    opts.tracking = Some(call.tracking(&manager));
    if call.req.subresource.as_deref() == Some("scale") {
        let bytes = body::read(raw).await?;
        let mut scale_obj = body::decode(
            &bytes,
            call.header(http::header::CONTENT_TYPE),
            call.cat.schemas(),
        )?;
        check_scale(call, &mut scale_obj)?;
        return write_scale(call, opts, move |_| Ok(scale_obj.clone())).await;
    }
    let d = decode_object(call, raw).await?;
    let out = call
        .state
        .registry
        .update(
            call.res,
            call.namespace(),
            call.name(),
            call.req.subresource.as_deref(),
            d.obj,
            opts,
        )
        .await?;
    let warnings = [d.warnings, admission.take_warnings()].concat();
    updated_response(call, output, out, &warnings).await
}

async fn updated_response(
    call: &Call<'_>,
    output: Output,
    out: UpdateOutcome,
    warnings: &[String],
) -> ApiResult<Response> {
    let obj = out.object().clone();
    let body = render(call, output, vec![obj], json!({}), true).await?;
    Ok(respond(StatusCode::OK, &body, output, warnings))
}

/// Applies a change to the Scale view and writes the replicas back.
async fn write_scale(
    call: &Call<'_>,
    mut opts: crate::registry::WriteOptions<'_>,
    change: impl Fn(Value) -> ApiResult<Value> + Send + Sync,
) -> ApiResult<Response> {
    let res = call.res;
    let scale_admission = scale::ScaleAdmission(opts.admit, res);
    opts.admit = &scale_admission;
    let mutate = |current: Value| -> ApiResult<Value> {
        let new_scale = change(scale::to_scale(res, &current))?;
        scale::apply_scale(res, current, &new_scale).map_err(|m| {
            ApiError::invalid(
                "autoscaling",
                "Scale",
                call.name(),
                vec![crate::apimachinery::status::Cause::invalid(
                    "spec.replicas",
                    &m,
                    &m,
                )],
            )
        })
    };
    let out = call
        .state
        .registry
        .guaranteed_update(res, call.namespace(), call.name(), opts, &mutate)
        .await?;
    Ok(respond(
        StatusCode::OK,
        &scale::to_scale(res, out.object()),
        Output::Json,
        &[],
    ))
}

/// kube's patch types: custom resources have no strategic merge patch.
pub fn patch_types(call: &Call<'_>) -> &'static [&'static str] {
    const JSON: &str = "application/json-patch+json";
    const MERGE: &str = "application/merge-patch+json";
    const STRATEGIC: &str = "application/strategic-merge-patch+json";
    match call.res.custom {
        Some(_) => &[JSON, MERGE, APPLY_PATCH],
        None => &[JSON, MERGE, STRATEGIC, APPLY_PATCH],
    }
}

pub async fn patch(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    call.query.check_field_manager()?;
    let ct = body::media_type(call.header(http::header::CONTENT_TYPE));
    if ct == APPLY_PATCH && call.req.subresource.is_none() {
        return apply(call, raw).await;
    }
    let kind = PatchType::from_content_type(&ct).ok_or_else(ApiError::no_route_for_media_type)?;
    if call.res.custom.is_some() && kind == PatchType::Strategic {
        return Err(ApiError::unsupported_patch_type(patch_types(call)));
    }
    let patch_body = body::read(raw).await?;
    if call.query.field_validation()? != FieldValidation::Ignore {
        patch::check_decodes(kind, &patch_body).map_err(patch_error)?;
    }
    patch_with(call, kind, patch_body).await
}

/// Applies a patch document of `kind` to the object (or its status or scale).
async fn patch_with(
    call: &Call<'_>,
    kind: PatchType,
    patch_body: bytes::Bytes,
) -> ApiResult<Response> {
    let mut opts = call.query.write_options()?;
    let admission = call.admission("UPDATE", opts.dry_run);
    opts.admit = &admission;
    let manager = call.field_manager();
    opts.tracking = Some(call.tracking(&manager));
    let schemas = call.cat.schemas();
    if call.req.subresource.as_deref() == Some("scale") {
        return write_scale(call, opts, |s: Value| {
            let mut patched =
                patch::apply_patch(kind, &s, &patch_body, Some(SCALE_SCHEMA), schemas)
                    .map_err(patch_error)?;
            check_scale_types(call, &mut patched)?;
            Ok(patched)
        })
        .await;
    }
    let compute = |current: &Value| {
        patch::apply_patch(
            kind,
            current,
            &patch_body,
            Some(&call.res.schema_name),
            schemas,
        )
        .map_err(patch_error)
    };
    update_with(call, opts, &admission, &compute).await
}

/// Updates the object to what `compute` makes of the current one (retried
/// on conflicts), with the checks every patch gets.
async fn update_with(
    call: &Call<'_>,
    opts: crate::registry::WriteOptions<'_>,
    admission: &crate::admission::RequestAdmission,
    compute: &(dyn Fn(&Value) -> ApiResult<Value> + Sync),
) -> ApiResult<Response> {
    let output = call.output()?;
    let warnings = std::sync::Mutex::new(Vec::new());
    let status_only = call.req.subresource.as_deref() == Some("status");
    let mutate = |current: Value| -> ApiResult<Value> {
        cpu::heavy(|| {
            let mut patched = compute(&current)?;
            body::check_object(call.res, &mut patched, call.namespace())?;
            check_types(call, &mut patched)?;
            if meta::name(&patched) != Some(call.name()) {
                return Err(ApiError::bad_request("metadata.name: Invalid value: the name of the patched object does not match the name on the URL"));
            }
            let bytes = patched.to_string();
            let w = validate_fields(call, bytes.as_bytes(), &mut patched)?;
            if bytes.len() > crate::storage::MAX_STORED_BYTES {
                registry::check_size(&patched)?;
            }
            if let Ok(mut guard) = warnings.lock() {
                *guard = w;
            }
            Ok(patch_result(call, &current, patched, status_only))
        })
    };
    let out = call
        .state
        .registry
        .guaranteed_update(call.res, call.namespace(), call.name(), opts, &mutate)
        .await?;
    let warnings = [
        warnings.into_inner().unwrap_or_default(),
        admission.take_warnings(),
    ]
    .concat();
    updated_response(call, output, out, &warnings).await
}

/// A patch of the main resource leaves status alone; a status patch changes
/// what the kind's status strategy lets it (`registry::status_write`).
fn patch_result(call: &Call<'_>, current: &Value, mut patched: Value, status_only: bool) -> Value {
    let keep_rv = |obj: &mut Value, from: &Value| match meta::resource_version(from) {
        Some(rv) if meta::resource_version(current) != Some(rv) => {
            meta::metadata_mut(obj).insert("resourceVersion".into(), json!(rv));
        }
        _ => {
            meta::metadata_mut(obj).remove("resourceVersion");
        }
    };
    if status_only {
        let mut out = registry::status_write::merge(call.res, current, &patched);
        keep_rv(&mut out, &patched);
        return out;
    }
    if call.res.has_subresource("status") {
        match current.get("status") {
            Some(s) => patched["status"] = s.clone(),
            None => {
                if let Some(o) = patched.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }
    let p = patched.clone();
    keep_rv(&mut patched, &p);
    patched
}

/// The media type of server-side apply requests.
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// Server-side apply (see `patch::apply`): creates the object when absent,
/// otherwise applies the configuration with the manager's field ownership.
async fn apply(call: &Call<'_>, raw: Body) -> ApiResult<Response> {
    let Some(manager) = call.query.get("fieldManager") else {
        return Err(ApiError::bad_request(
            "PATCH with apply requires fieldManager to be set",
        ));
    };
    let bytes = body::read(raw).await?;
    let mut applied =
        cpu::heavy(|| body::decode(&bytes, Some("application/yaml"), call.cat.schemas()))?;
    // kube names the configuration as written in the errors below.
    let written_as = format!(
        "{}/{}",
        meta::meta_str(&applied, "namespace").unwrap_or_default(),
        meta::name(&applied).unwrap_or_default()
    );
    body::check_object(call.res, &mut applied, call.namespace())?;
    // kube's field manager types the configuration first (whatever
    // fieldValidation says), then decodes the YAML strictly (a repeated key
    // is its 400 under Strict; under Warn the warning is not carried yet).
    cpu::heavy(|| check_declared(call, &applied, &written_as))?;
    let strict = |repeated: &str| {
        format!(
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {repeated}"
        )
    };
    cpu::heavy(|| repeated_key_under(call, &bytes, &strict))?;
    // A configuration without a name applies to the object the URL names
    // (kube merges it onto the live object before checking the name).
    if meta::name(&applied).is_none_or(str::is_empty) {
        meta::metadata_mut(&mut applied).insert("name".into(), json!(call.name()));
    }
    if meta::name(&applied) != Some(call.name()) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            meta::name(&applied).unwrap_or_default(),
            call.name()
        )));
    }
    let api_version = call.res.api_version();
    let who = Applier {
        manager,
        force: call.query.flag("force"),
        api_version: &api_version,
        skip_status: call.res.has_subresource("status"),
        subresource: "",
    };
    let schemas = call.cat.schemas();
    let root = Some(call.res.schema_name.as_str());
    let ssa = |current: Option<&Value>| {
        server_side_apply(current, &applied, &who, root, schemas).map_err(apply_error)
    };
    match call
        .state
        .registry
        .get(call.res, call.namespace(), call.name())
        .await
    {
        Err(e) if e.code == 404 => {
            let decoded = cpu::heavy(|| {
                let json = applied.to_string();
                let mut obj = ssa(None)?;
                check_types(call, &mut obj)?;
                let warnings = validate_fields(call, json.as_bytes(), &mut obj)?;
                Ok::<_, ApiError>(Decoded { obj, warnings })
            })?;
            create_decoded(call, decoded, false).await
        }
        Err(e) => Err(e),
        Ok(_) => {
            let mut opts = call.query.write_options()?;
            let admission = call.admission("UPDATE", opts.dry_run);
            opts.admit = &admission;
            update_with(call, opts, &admission, &|current| ssa(Some(current))).await
        }
    }
}

/// kube's structured-merge typing of an apply configuration: a field its
/// schema does not declare (nor preserves as unknown) fails the apply with
/// kube's 500 `failed to create typed patch object (ns/name; gvk): .path:
/// field not declared in schema` (several: `errors:` and one per line).
fn check_declared(call: &Call<'_>, applied: &Value, written_as: &str) -> ApiResult<()> {
    let undeclared = match call.res.custom.as_ref().and_then(|c| c.compiled.as_ref()) {
        Some(schema) => schema.prune(&mut applied.clone()),
        None => field_validation::check(call.cat, call.res, applied.to_string().as_bytes()).unknown,
    };
    let lines: Vec<String> = undeclared
        .iter()
        .map(|path| format!(".{path}: field not declared in schema"))
        .collect();
    let errors = match lines.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let res = call.res;
    let gvk = match res.group.as_str() {
        "" => format!("/{}, Kind={}", res.version, res.kind),
        group => format!("{group}/{}, Kind={}", res.version, res.kind),
    };
    let message = format!("failed to create typed patch object ({written_as}; {gvk}): {errors}");
    // kube's error is no Status: answered as its reason-less 500.
    Err(ApiError::new(500, "", message))
}

fn apply_error(e: ApplyError) -> ApiError {
    match e {
        ApplyError::Patch(e) => patch_error(e),
        ApplyError::Conflicts(conflicts) => {
            let causes = conflicts
                .iter()
                .map(|(manager, version, path)| {
                    let using = if version.is_empty() { String::new() } else { format!(" using {version}") };
                    json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{manager}\"{using}"), "field": path})
                })
                .collect();
            ApiError {
                details: Some(Box::new(json!({"causes": Value::Array(causes)}))),
                ..ApiError::new(409, "Conflict", apply::conflict_message(&conflicts))
            }
        }
    }
}

pub(super) fn patch_error(e: patch::PatchError) -> ApiError {
    ApiError {
        code: e.status_code(),
        reason: e.reason(),
        message: e.status_message(),
        details: e.details().map(Box::new),
        list_continue: None,
    }
}
