fn main() {
    let path = std::env::args().nth(1).unwrap();
    let generic = std::env::args().any(|a| a == "--generic");
    let text = std::fs::read_to_string(&path).unwrap();
    match ir::parse_module_with(&text, &path, ir::Registry::standard()) {
        Ok(m) => print!(
            "{}",
            if generic {
                m.print_generic()
            } else {
                m.print()
            }
        ),
        Err(e) => {
            eprintln!("{}", e.render(&text));
            std::process::exit(1)
        }
    }
}
