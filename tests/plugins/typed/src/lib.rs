//! A component with typed exports and no `toolhost:plugin` world, as any
//! component toolchain would build one: toolhost derives a tool from each
//! exported function. Every function echoes or computes plainly, so a test
//! can tell a wrong conversion on either side from the guest's answer.

// The WIT has functions of eight parameters, on purpose; the generated
// glue repeats them.
#![allow(clippy::too_many_arguments)]

wit_bindgen::generate!({ world: "typed", path: "wit" });

use exports::toolhost_test::typed::shapes::{
    self, Color, Counter, GuestCounter, Perms, Point, Shape,
};

struct Typed;

impl Guest for Typed {
    fn read_file(path: String) -> Result<String, String> {
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))
    }

    fn write_file(path: String, contents: String) -> Result<(), String> {
        std::fs::write(&path, contents).map_err(|e| format!("cannot write {path}: {e}"))
    }

    fn add(a: u64, b: u64) -> u64 {
        a.checked_add(b).expect("add overflowed u64")
    }

    fn echo_ints(
        a: i8,
        b: u8,
        c: i16,
        d: u16,
        e: i32,
        f: u32,
        g: i64,
        h: u64,
    ) -> (i8, u8, i16, u16, i32, u32, i64, u64) {
        (a, b, c, d, e, f, g, h)
    }

    fn echo_floats(a: f32, b: f64) -> (f32, f64) {
        (a, b)
    }

    fn echo_scalars(c: char, s: String, b: bool) -> (char, String, bool) {
        (c, s, b)
    }

    fn greet(name: String, title: Option<String>) -> String {
        match title {
            Some(title) => format!("Hello, {title} {name}!"),
            None => format!("Hello, {name}!"),
        }
    }

    fn fail(message: String) -> Result<u32, String> {
        Err(message)
    }

    fn nothing() {}

    fn crash(message: String) {
        panic!("{message}");
    }

    fn describe() -> String {
        "the world's describe".into()
    }

    #[allow(clippy::type_complexity)]
    fn mix(
        p: Pair,
        e: Event,
        l: Level,
        m: Mode,
        o: Option<u8>,
        r: Result<u8, String>,
        xs: Vec<i16>,
        t: (bool, f64),
    ) -> (
        Pair,
        Event,
        Level,
        Mode,
        Option<u8>,
        Vec<Result<u8, String>>,
        Vec<i16>,
        (bool, f64),
    ) {
        (p, e, l, m, o, vec![r], xs, t)
    }
}

impl shapes::Guest for Typed {
    type Counter = CounterImpl;

    fn echo_record(p: Point) -> Point {
        p
    }

    fn echo_variant(s: Shape) -> Shape {
        s
    }

    fn echo_enum(c: Color) -> Color {
        c
    }

    fn echo_flags(p: Perms) -> Perms {
        p
    }

    fn echo_option(o: Option<Option<u8>>) -> Option<Option<u8>> {
        o
    }

    fn echo_list(points: Vec<Point>) -> Vec<Point> {
        points
    }

    fn echo_tuple(t: (String, u8, bool)) -> (String, u8, bool) {
        t
    }

    fn echo_result(r: Result<u32, String>) -> Vec<Result<u32, String>> {
        vec![r]
    }

    fn area(s: Shape) -> f64 {
        match s {
            Shape::Circle(r) => std::f64::consts::PI * r * r,
            Shape::Rect(p) => f64::from(p.x) * f64::from(p.y),
            Shape::Dot => 0.0,
        }
    }

    fn describe() -> String {
        "the interface's describe".into()
    }

    fn echo_scalars_in(a: u64, b: i8, c: char, f: f32, t: bool) -> (u64, i8, char, f32, bool) {
        (a, b, c, f, t)
    }

    fn make_counter() -> Counter {
        Counter::new(CounterImpl(std::cell::Cell::new(0)))
    }
}

struct CounterImpl(std::cell::Cell<u32>);

impl GuestCounter for CounterImpl {
    fn new() -> Self {
        CounterImpl(std::cell::Cell::new(0))
    }

    fn bump(&self) -> u32 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }
}

// Only for wasm: natively, `cargo build --workspace` links this cdylib with
// a version script listing its exports, and the linker cannot parse an
// interface export's name (`toolhost-test:typed/shapes@0.1.0#describe`).
#[cfg(target_arch = "wasm32")]
export!(Typed);
