//! A WASI command, not a toolhost plugin: toolhost must refuse to load it
//! with a message naming the file and the missing exports.

fn main() {
    println!("I am a command, not a plugin");
}
