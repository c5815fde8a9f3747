//! The rest of qri-io/starlib's module set, which the catalog's starlark
//! function can `load()`: `math.star` is provided; the others (network,
//! file-format and HTML libraries a KRM function has no use for here) load
//! as empty namespaces, so a script that only loads them runs as upstream,
//! and calling into one fails with "has no attribute".

use ::starlark::environment::GlobalsBuilder;
use ::starlark::starlark_module;
use ::starlark::values::float::UnpackFloat;

/// starlib modules loaded as empty namespaces: path and exported name.
pub(crate) const EMPTY: [(&str, &str); 10] = [
    ("bsoup.star", "bsoup"),
    ("encoding/csv.star", "csv"),
    ("geo.star", "geo"),
    ("hash.star", "hash"),
    ("html.star", "html"),
    ("http.star", "http"),
    ("re.star", "re"),
    ("time.star", "time"),
    ("xlsx.star", "xlsx"),
    ("zipfile.star", "ZipFile"),
];

/// The globals of a starlib module other than the encodings, if it is one.
pub(crate) fn module(path: &str) -> Option<GlobalsBuilder> {
    if path == "math.star" {
        return Some(GlobalsBuilder::new().with_namespace("math", math_members));
    }
    EMPTY
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, name)| GlobalsBuilder::new().with_namespace(name, |_| {}))
}

/// starlib `math`: the float functions and constants.
#[starlark_module]
fn math_members(builder: &mut GlobalsBuilder) {
    const pi: f64 = std::f64::consts::PI;
    const e: f64 = std::f64::consts::E;

    fn ceil(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.ceil())
    }
    fn floor(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.floor())
    }
    fn round(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.round())
    }
    fn fabs(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.abs())
    }
    fn sqrt(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.sqrt())
    }
    fn exp(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.exp())
    }
    fn log(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.ln())
    }
    fn pow(
        #[starlark(require = pos)] x: UnpackFloat,
        #[starlark(require = pos)] y: UnpackFloat,
    ) -> ::starlark::Result<f64> {
        Ok(x.0.powf(y.0))
    }
    fn sin(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.sin())
    }
    fn cos(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.cos())
    }
    fn tan(#[starlark(require = pos)] x: UnpackFloat) -> ::starlark::Result<f64> {
        Ok(x.0.tan())
    }
}
