//! The `bash` tool against the machine's own `/bin/bash`: the commands
//! agents run most (listing, reading and searching files, the text tools,
//! in-place edits, archives, and the shell's own syntax) must print what
//! bash and the GNU tools print and exit as they exit, or a model reasons
//! from a wrong result. Each command runs in both shells over the same
//! small fixture tree, and the two stdouts and exit codes must be equal
//! (not stderr: its wording is each implementation's own).
//!
//! All the commands run in ONE call of the tool: a generated script runs
//! each in a subshell and prints a record of its stdout and exit code, so
//! the whole comparison costs one toolhost process (about half a second
//! for the ~450 commands here). The real bash runs the same script over a
//! second tree. The commands that only read share one copy of the fixture
//! in each tree, and a check after the run holds them to it; each command
//! that writes has a fresh copy of its own.
//!
//! A command whose output differs in a way no phrasing avoids is in
//! [`KNOWN_DIFFERENCES`] with what was seen, and a test checks that each
//! still differs: when bashkit (or toolhost's file system under it) fixes
//! one, that test fails and says to move it to the compared lists.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::common::{Workspace, stdout_of};

/// The reference shell. Every machine the suite runs on has it.
const REAL_BASH: &str = "/bin/bash";

/// The tree the commands run in: source files, text, a CSV, JSON, a log
/// and a patch that applies to `src/lib.rs`.
const FIXTURE: &[(&str, &str)] = &[
    (
        "README.md",
        "# Demo project\n\
         \n\
         A small tree for the shell tests.\n\
         TODO: write more docs\n",
    ),
    (
        "notes.txt",
        "hello world\n\
         foo bar foo\n\
         # a comment\n\
         Baz qux\n\
         foo.bar\n\
         fooXbar\n\
         \n\
         last line\n",
    ),
    (
        "a.txt",
        "alpha\n\
         beta\n\
         gamma\n\
         delta\n",
    ),
    (
        "b.txt",
        "alpha\n\
         BETA\n\
         gamma\n\
         delta\n\
         epsilon\n",
    ),
    (
        "data.csv",
        "name,city,age\n\
         ann,paris,31\n\
         bob,oslo,25\n\
         cid,paris,42\n\
         dee,rome,19\n\
         eve,oslo,25\n",
    ),
    (
        "numbers.txt",
        "10\n\
         9\n\
         100\n\
         9\n\
         -3\n\
         2.5\n",
    ),
    (
        "config.json",
        "{\n\
         \x20 \"name\": \"demo\",\n\
         \x20 \"version\": \"1.2.0\",\n\
         \x20 \"deps\": [\n\
         \x20   {\"n\": \"serde\", \"v\": 1},\n\
         \x20   {\"n\": \"tokio\", \"v\": 2},\n\
         \x20   {\"n\": \"rand\", \"v\": 3}\n\
         \x20 ],\n\
         \x20 \"private\": true,\n\
         \x20 \"tags\": null\n\
         }\n",
    ),
    (
        "src/main.rs",
        "fn main() {\n\
         \x20   println!(\"hello\");\n\
         \x20   // TODO: handle args\n\
         \x20   demo::run();\n\
         }\n",
    ),
    (
        "src/lib.rs",
        "pub fn run() {\n\
         \x20   helper(1);\n\
         }\n\
         \n\
         fn helper(x: i32) -> i32 {\n\
         \x20   x + 1\n\
         }\n",
    ),
    ("src/util/mod.rs", "pub mod helpers;\n"),
    (
        "src/util/helpers.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n\
         \x20   a + b\n\
         }\n\
         \n\
         pub fn main_helper() {}\n\
         // TODO: more helpers\n",
    ),
    (
        "tests/smoke.rs",
        "#[test]\n\
         fn smoke() {\n\
         \x20   assert_eq!(2 + 2, 4);\n\
         }\n",
    ),
    (
        "docs/guide.md",
        "# Guide\n\
         \n\
         Run `make`.\n\
         See ERROR codes below.\n",
    ),
    ("docs/old.md", "old notes\n"),
    (
        "logs/app.log",
        "2024-01-01 INFO start\n\
         2024-01-01 WARN disk low\n\
         2024-01-02 ERROR failed to open\n\
         2024-01-02 INFO retry\n\
         2024-01-03 error lowercase\n\
         2024-01-03 ERROR again\n",
    ),
    (".hidden", "secret-ish\n"),
    (
        "fix.patch",
        "--- a/src/lib.rs\n\
         +++ b/src/lib.rs\n\
         @@ -1,3 +1,4 @@\n\
         \x20pub fn run() {\n\
         -    helper(1);\n\
         +    let y = helper(1);\n\
         +    println!(\"{y}\");\n\
         \x20}\n",
    ),
];

/// The fixture files modified later than the rest ([`NEW_MTIME`], the
/// others [`OLD_MTIME`]), so `find -newer`, `ls -t` and `[ -nt ]` have an
/// order to find, the same in both trees.
const NEWER: &[&str] = &["src/main.rs", "docs/guide.md"];

/// 2020-09-13 12:26:40 UTC.
const OLD_MTIME: u64 = 1_600_000_000;

/// 2023-11-14 22:13:20 UTC.
const NEW_MTIME: u64 = 1_700_000_000;

/// Programs outside coreutils that some commands use and a machine may
/// lack: a command that names one the machine has not is left out of the
/// comparison (and said so on stderr) rather than failing for the
/// machine's sake.
const OPTIONAL_PROGRAMS: &[&str] = &["jq", "patch"];

/// Commands that only read, which the bash tool must run as `/bin/bash`
/// does (with `LC_ALL=C` and `TZ=UTC`): the same stdout, with each tree's
/// root written `{ws}`, and the same exit code. They share one copy of the
/// fixture, which must be as planted after them. What prints in directory
/// order (`find`) goes through `sort`: in bash that order is the disk's.
const COMPARED: &[&str] = &[
    // Listing and reading files.
    "ls",
    "ls -A",
    "ls -1 src",
    "ls -R src",
    "ls src/*.rs",
    "ls -d */",
    "ls -F src",
    "ls -t docs",
    r#"ls nope; echo "ls: $?""#,
    "cat README.md",
    "cat -n src/main.rs",
    "cat a.txt b.txt",
    "cat missing.txt",
    "cat -s notes.txt | wc -l",
    "head -n 3 data.csv",
    "head -2 logs/app.log",
    "head -c 10 README.md",
    "head -n -2 a.txt",
    "head -n 3 src/*.rs",
    "tail -n 2 data.csv",
    "tail -n +2 data.csv",
    "tail -1 logs/app.log",
    "tail -n 1 a.txt b.txt",
    "tail -c 5 a.txt",
    "tac a.txt",
    "nl a.txt",
    "wc -l data.csv",
    "wc -l src/*.rs",
    "wc -w README.md",
    "wc -c notes.txt",
    "wc -m a.txt",
    "wc -L notes.txt",
    "wc -l < data.csv",
    "cat data.csv | wc -l",
    "cat a.txt | wc",
    "wc -l *.txt | sort -n",
    "stat -c %s a.txt",
    // grep, on files and stdin (`grep -r` is among the known differences).
    "grep -i error logs/app.log",
    "grep -c ERROR logs/app.log",
    "grep -E 'WARN|ERROR' logs/app.log",
    "grep -F 'foo.bar' notes.txt",
    "grep 'foo.bar' notes.txt",
    "grep -w foo notes.txt",
    "grep -v '^#' notes.txt",
    "grep -q ERROR logs/app.log; echo $?",
    "grep nothing-here README.md",
    "grep -o 'fo*' notes.txt",
    "grep -n -A1 WARN logs/app.log",
    "grep -B1 -n retry logs/app.log",
    "grep -C1 INFO logs/app.log",
    "grep -e alpha -e delta a.txt",
    "grep -x beta a.txt b.txt",
    "grep -n alpha a.txt b.txt",
    "grep -l TODO src/*.rs src/util/*.rs",
    "grep -L TODO src/*.rs",
    "grep -c fn src/lib.rs src/main.rs",
    "grep -m1 INFO logs/app.log",
    "grep -c '' notes.txt",
    "grep -n '^$' notes.txt",
    r"grep '\bfoo\b' notes.txt",
    "grep -E '^[0-9]{4}-01-0[12] ' logs/app.log",
    r"grep '[[:digit:]]\+' data.csv | head -2",
    "grep -oE '[0-9]+' data.csv",
    "grep -ivn 'o' a.txt",
    "grep -E -o '[a-z]+@[a-z]+' <<< 'mail bob@host and ann@site'",
    "grep -n 'fn ' src/*.rs",
    "find . -name '*.rs' | sort | xargs grep -n TODO",
    // find.
    "find . -name '*.rs' | sort",
    "find . -type d | sort",
    "find . -path './src/*' -name '*.rs' | sort",
    "find . -maxdepth 1 -type f | sort",
    "find src -mindepth 2 -type f | sort",
    "find . -newer README.md -type f | sort",
    "find . -name '*.md' -newer docs/old.md",
    r"find src -name '*.rs' -exec wc -l {} \; | sort",
    "find . -name '*.md' -exec grep -l Guide {} +",
    r"find . -name '*.rs' -exec grep -l 'pub fn' {} \; | sort",
    "find . -name '*.md' | sort | xargs wc -l",
    "find . -type f -name '*.txt' -o -name '*.csv' | sort",
    "find . -iname 'README*'",
    "find . -type f -empty",
    "find . -name '*.rs' -not -path './src/*' | sort",
    "find . -path '*/util' -prune -o -name '*.rs' -print | sort",
    r"find . -regex '.*/[a-z]*\.md' | sort",
    "find . -size +100c -type f | sort",
    "find . -type f | wc -l",
    r"find . -maxdepth 1 -name '*.txt' -printf '%f\n' | sort",
    "find src -type f | sed 's|^src/||' | sort",
    // sort, uniq, cut, tr, paste, comm.
    "sort -t, -k3 -n data.csv",
    "sort -r a.txt",
    "sort -n numbers.txt",
    "sort -u numbers.txt",
    "sort -rn numbers.txt | head -3",
    "sort -f notes.txt",
    "sort -t, -k2,2 -k3,3n data.csv",
    "sort -t, -k3nr data.csv",
    r"printf '3 b\n1 a\n2 b\n' | sort -k2,2 -s",
    r"printf '1.10\n1.2\n1.9\n' | sort -V",
    "sort numbers.txt | uniq",
    "cut -d, -f2 data.csv | sort | uniq -c",
    "cut -d, -f2 data.csv | tail -n +2 | sort | uniq -d",
    "uniq -u <(sort numbers.txt)",
    "cut -d, -f1,3 data.csv",
    "cut -c1-5 README.md",
    "cut -d' ' -f2- logs/app.log",
    r#"printf "%s\t%s\n" a b c d | cut -f2"#,
    "tr a-z A-Z < a.txt",
    "tr '[:lower:]' '[:upper:]' < a.txt",
    "tr -d ',' < data.csv",
    "echo 'a    b  c' | tr -s ' '",
    r"tr '\n' ' ' < a.txt",
    r"tr -cd 'a-z\n' < README.md",
    "paste -sd, a.txt",
    "seq 10 | paste -sd+",
    "comm -12 <(sort a.txt) <(sort b.txt)",
    "comm -3 <(sort a.txt) <(sort b.txt)",
    "rev <<< hello",
    "fold -w 5 <<< abcdefghijkl",
    // sed.
    "sed 's/foo/FOO/g' notes.txt",
    "sed -n '2,4p' data.csv",
    "sed '1d' data.csv",
    "sed '2,3d' a.txt",
    "sed -n '/ERROR/p' logs/app.log",
    "sed -n '/WARN/,/retry/p' logs/app.log",
    r"sed -E 's/([0-9]+)/<\1>/' data.csv",
    r"sed -n 's/^\([a-z]*\),\([a-z]*\),.*/\2 \1/p' data.csv",
    "sed 's/a/[&]/2' a.txt",
    "sed -n '$p' a.txt",
    "sed -n '1~2p' a.txt",
    "sed -e 's/a/1/' -e 's/e/2/' a.txt",
    "sed '/^$/d' notes.txt",
    "sed '3q' data.csv",
    r"sed 's/\s\+$//' notes.txt",
    "sed 's/[[:space:]]*$//' notes.txt | cat -A",
    r"sed '$a\new last' a.txt",
    r"sed '1i\header' a.txt",
    "sed 'y/abc/xyz/' a.txt",
    r#"echo "  trim me  " | sed 's/^ *//;s/ *$//'"#,
    r#"echo "CamelCase" | sed 's/[A-Z]/_&/g'"#,
    // awk.
    "awk -F, '{print $2}' data.csv",
    "awk -F, 'NR>1 {s+=$3} END {print s}' data.csv",
    "awk '{print NF}' notes.txt",
    "awk 'length > 10' notes.txt",
    "awk -F, '$3 > 25 {print $1}' data.csv",
    r#"awk '{printf "%-6s|%s\n", $1, $2}' logs/app.log"#,
    "awk -F, 'NR>1 {c[$2]++} END {for (k in c) print k, c[k]}' data.csv | sort",
    r#"awk '{gsub(/o/, "0"); print}' notes.txt"#,
    "awk 'NR==2, NR==3' a.txt",
    "awk -v x=5 'BEGIN {print x * 2}'",
    "awk '{ print toupper(substr($0, 1, 3)) }' a.txt",
    r#"awk 'BEGIN{FS=","; OFS="|"} {$1=$1; print}' data.csv"#,
    "awk '/ERROR/ {n++} END {print n+0}' logs/app.log",
    r#"awk '{ $2 = ""; print }' a.txt data.csv"#,
    "awk 'END { print NR }' data.csv",
    "awk '{ print $NF }' logs/app.log",
    "awk -F, -v OFS=';' '{$1=$1}1' data.csv",
    r#"awk 'BEGIN { printf "%5.1f|%-3d|%s\n", 3.14159, 7, "x" }'"#,
    "awk '{a[NR]=$0} END {for(i=NR;i>0;i--) print a[i]}' a.txt",
    "awk 'match($0, /[0-9]+/) { print substr($0, RSTART, RLENGTH) }' data.csv",
    r#"awk '{ split($0, p, ","); print p[2] }' data.csv"#,
    r#"awk 'BEGIN { print length("hello"), index("hello","l"), sprintf("%03d", 7) }'"#,
    r#"awk '{sum+=$1} END {printf "%.2f\n", sum/NR}' numbers.txt"#,
    "awk 'NR%2==0' data.csv",
    "awk 'FNR==1 {print FILENAME}' a.txt b.txt",
    r#"echo "a,b;c" | awk -F'[,;]' '{print $3 $1}'"#,
    r"printf 'x y\n' | awk -F'\t' '{print NF}'",
    "seq 10 | awk '{s+=$1} END {print s}'",
    // diff, and patch --dry-run.
    "diff a.txt b.txt",
    "diff -u a.txt b.txt | tail -n +3",
    r#"diff a.txt a.txt; echo "same: $?""#,
    "diff -q a.txt b.txt",
    "diff <(sort a.txt) <(sort b.txt)",
    "cmp a.txt b.txt; echo $?",
    "patch --dry-run -p1 < fix.patch; cat src/lib.rs",
    // xargs, echo, printf.
    "echo a b c | xargs -n1",
    "find . -name '*.md' | sort | xargs cat | wc -l",
    r"printf '%s\n' x y | xargs -I{} echo item-{}",
    "echo a.txt b.txt | xargs wc -l",
    "find . -type f -name '*.txt' | sort | xargs -n 2 echo",
    "find . -type f -print0 | sort -z | xargs -0 wc -c",
    r#"xargs -r echo none < /dev/null; echo "xargs: $?""#,
    "echo -n hi",
    r"echo -e 'a\tb'",
    r"echo -e '\x41\0102'",
    r#"echo "a  b" 'c  d' a\ \ b"#,
    r"printf '%05.2f\n' 3.14159",
    r"printf '%s-%s\n' a b c d",
    r"printf '%x %o %d%%\n' 255 8 42",
    r"printf '%-5s|%5s|\n' ab cd",
    r"printf '%b\n' 'a\tb'",
    r#"printf '%q\n' "a b""#,
    r#"printf '%d\n' "'A""#,
    "printf -v v '%03d' 7; echo $v",
    "printf 'abc' | od -An -c",
    r"printf 'a\r\nb\r\n' | tr -d '\r' | od -c",
    // test and [[ ]].
    "test -f README.md && echo yes",
    "[ -d src ] && echo dir",
    r#"[ -z "" ] && echo empty"#,
    "[ 3 -lt 10 ]; echo $?",
    "[[ abc == a* ]] && echo match",
    "test -e nope; echo $?",
    r#"[ "$x" = "" ] && [ -n "y" ] && echo both"#,
    r#"[[ "v1.2" =~ ^v([0-9]+)\.([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}-${BASH_REMATCH[2]}""#,
    "[ src/main.rs -nt README.md ] && echo newer",
    "[ -s a.txt ] && [ ! -s nope ] && echo sized",
    "test 2 -gt 1 -a 3 -gt 2 && echo and",
    r"[ abc \< abd ] && echo less",
    "x=y; [[ -n $x && $x == y ]] && echo yes",
    "x=1; [[ -v x ]] && echo set",
    // mkdir, rm: what fails, which changes nothing.
    "mkdir docs; echo $?",
    "rm -f nope; echo $?",
    "rm nope; echo $?",
    // Paths, the working directory, the environment.
    "basename src/util/helpers.rs .rs",
    "basename -a a/b.txt c/d.txt",
    "dirname src/util/helpers.rs",
    r#"basename "$PWD""#,
    r#"echo "$(basename "$(pwd)")""#,
    "pwd",
    "cd src && pwd && ls",
    "cd nope; echo $?",
    "cd src/util && cd .. && ls",
    "cd src; cd -",
    r#"cd src; echo "$PWD $OLDPWD""#,
    "cd; pwd",
    "echo ~ ~/x",
    r#"readlink -f src/../a.txt | sed "s|$PWD|.|""#,
    "realpath --relative-to=. src/util",
    "export FOO=bar; echo $FOO",
    "FOO=x env | grep '^FOO='",
    "X=1; export X; env | grep '^X='",
    "printenv FOO; FOO=1 printenv FOO",
    r#"unset HOME; echo "${HOME:-unset}""#,
    "type cd",
    "command -v ls >/dev/null && echo has-ls",
    // true, false, seq, date, expr, and other small utilities.
    "true; echo $?",
    "false; echo $?",
    "false || echo fallback",
    "true && echo ok",
    "seq 5",
    "seq 2 2 10",
    "seq -s, 5",
    "seq -w 8 10",
    "seq 3 -1 1",
    "seq -f '%02g' 3",
    "seq 1 100000 | head -2",
    "yes | head -3",
    "date -u -d @0 +%Y",
    "date -u -d @86400 +%F",
    "expr 3 + 4",
    "timeout 5 echo hi",
    "sleep 0; echo slept",
    // jq.
    "jq -r '.name' config.json",
    "jq '.deps | length' config.json",
    "jq -c '.deps[]' config.json",
    "jq -r '.deps[] | select(.v > 1) | .n' config.json",
    "jq . config.json",
    r#"echo '{"a":1,"b":[1,2]}' | jq .b"#,
    r#"jq -r '.deps | map(.n) | join(",")' config.json"#,
    "jq '.missing' config.json",
    "jq -e '.tags' config.json; echo $?",
    "jq -r 'keys[]' config.json",
    r#"jq '.version |= "2.0.0" | .version' config.json"#,
    "jq -n '[1,2,3] | add'",
    "jq --arg n x '.name = $n' config.json | jq -c '{name, version}'",
    r#"printf '{"a":1}\n{"a":2}\n' | jq -s 'map(.a) | add'"#,
    r#"jq -r '.deps[] | "\(.n)=\(.v)"' config.json"#,
    "jq -r '.deps[] | [.n, .v] | @csv' config.json",
    "jq -c 'to_entries | map(.key) | sort' config.json",
    r#"jq -r '.version | split(".") | .[0]' config.json"#,
    r#"jq 'has("name"), has("nope")' config.json"#,
    "jq '[.deps[].v] | max' config.json",
    r#"jq -r '.tags // "none"' config.json"#,
    "jq -c '.deps | sort_by(-.v) | .[0]' config.json",
    r#"jq -r '.deps[] | select(.n | test("^r")) | .n' config.json"#,
    "jq -c . config.json",
    "jq -c 'del(.tags)' config.json",
    r#"jq -c 'with_entries(select(.key != "deps"))' config.json"#,
    r"find . -name '*.json' -exec jq -r .name {} \;",
    // Checksums, base64, archives (listed from stdin).
    "sha256sum a.txt",
    "echo -n abc | sha256sum",
    "md5sum a.txt; sha1sum a.txt",
    "echo hello | base64",
    "echo aGVsbG8K | base64 -d",
    "base64 a.txt | base64 -d",
    "base64 -w0 a.txt; echo",
    "tar -cf - a.txt b.txt | tar -tf -",
    "gzip -c a.txt | gunzip",
    // Pipes, lists and redirections.
    "cat data.csv | grep paris | sort -r | head -1",
    "ls | wc -l",
    "ls | head -n 2 | tail -n 1",
    "ls src | grep -v util",
    "cat logs/app.log | awk '{print $2}' | sort | uniq -c | sort -rn",
    "cat data.csv | sed 1d | sort -t, -k3 -n | head -1 | cut -d, -f1",
    "sort -k2 -t, data.csv | awk -F, '{print $2}' | uniq",
    r"printf 'b\na\n' | sort | tr '\n' ,",
    "cat missing 2>&1 | wc -l",
    "cat missing 2>/dev/null; echo $?",
    "{ echo out; echo err >&2; } 2>&1 | sort",
    "{ echo out; echo err >&2; } 2>/dev/null",
    "{ echo out; echo err >&2; } 2>&1 >/dev/null",
    "ls nope &> /dev/null; echo $?",
    "cat <(echo from-procsub)",
    // Quoting, variables, expansions, substitutions, globs.
    r#"x='it'"'"'s'; echo "$x""#,
    r#"echo '$notavar' "\$x" "tab\there""#,
    r#"echo 'single "double"' "double 'single'""#,
    "echo \"line1\nline2\" | wc -l",
    "x=5; echo ${x}0 ${y:-default} ${#x}",
    "s=hello.tar.gz; echo ${s%.gz} ${s%%.*} ${s#*.} ${s/l/L} ${s//l/L}",
    "s=abcdef; echo ${s:1:3} ${s: -2} ${s^^}",
    "s=HeLLo; echo ${s,,} ${s^}",
    "echo ${unset_var:?is required}; echo after",
    r#"printf '%s\n' "${s:-fallback}""#,
    "v=HOME2; HOME2=z; echo ${!v}",
    r#"arr=(a b c); echo ${arr[1]} ${#arr[@]} "${arr[@]}""#,
    r#"arr=(a b c d); echo "${arr[@]:1:2}""#,
    r#"arr=(b a c); IFS=,; echo "${arr[*]}""#,
    r#"a=(x); a+=(y z); unset 'a[0]'; echo "${a[@]}" ${#a[@]}"#,
    "declare -A m; m[k]=v; m[j]=w; echo ${m[k]} ${#m[@]}",
    "declare -i n=5; n+=3; echo $n",
    "echo $((3 * (4 + 2) % 5)) $((2**10)) $((7/2))",
    "echo $(( 0x1f )) $(( 10 % 3 )) $(( -7 / 2 ))",
    "echo $((16#ff)) $((2#101))",
    "echo $((1 > 2 ? 10 : 20))",
    "num=007; echo $((10#$num + 1))",
    "x=5; (( x > 3 )) && echo big; let y=x*2; echo $y",
    "echo $((RANDOM >= 0))",
    r#"echo "files: $(ls | wc -l)""#,
    "n=$(grep -c ERROR logs/app.log); echo $((n + 1))",
    "echo `echo back`tick",
    r#"echo "$(echo "$(echo nested)")""#,
    "echo $(( $(wc -l < a.txt) * 2 ))",
    r#"printf '%s\n' "$(cat a.txt)""#,
    r#"printf '%s %s\n' "$(echo one)" "$(echo two)""#,
    "echo {1..5} {a,b}.txt {05..10..2}",
    "echo *.txt",
    "echo src/*",
    "echo src/**/*.rs",
    "echo nomatch*",
    "echo [ab].txt",
    "ls -d src/u*",
    "ls *.md 2>/dev/null || echo none",
    r"printf '%s\n' *.txt | wc -l",
    // Control flow, functions, here-documents.
    r#"for f in *.txt; do echo "$f: $(wc -l < "$f")"; done"#,
    r#"for f in src/*.rs; do echo "${f##*/}"; done"#,
    r#"for f in $(ls src); do echo "<$f>"; done"#,
    r#"for x in "a b" c; do echo "[$x]"; done"#,
    "i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done",
    "n=3; until [ $n -eq 0 ]; do echo $n; n=$((n-1)); done",
    r#"for ((i=0; i<3; i++)); do echo "i=$i"; done"#,
    "for i in 1 2 3 4; do [ $i = 2 ] && continue; [ $i = 4 ] && break; echo $i; done",
    "for i in 1 2; do for j in a b; do [ $j = b ] && break 2; echo $i$j; done; done",
    "while :; do break; done; echo out",
    "case foo.rs in *.rs) echo rust;; *) echo other;; esac",
    "case x.tar.gz in *.zip|*.gz) echo archive;; esac",
    "if grep -q ERROR logs/app.log; then echo found; else echo none; fi",
    "if ! grep -q zzz a.txt; then echo absent; fi",
    r#"while read -r line; do echo "> $line"; done < a.txt"#,
    r#"while IFS=, read -r name city age; do echo "$city:$name"; done < data.csv"#,
    r#"grep ERROR logs/app.log | while read -r d l m; do echo "$d $m"; done"#,
    "n=0; cat a.txt | while read -r l; do n=$((n+1)); done; echo $n",
    r#"while read -r a; do echo "$a"; done <<< "$(seq 3)""#,
    r#"read -r a b <<< "one two three"; echo "$b""#,
    r#"IFS=: read -ra parts <<< "a:b:c"; echo "${parts[2]} ${#parts[@]}""#,
    r#"s="a,b,c"; IFS=, read -ra p <<< "$s"; for x in "${p[@]}"; do echo "[$x]"; done"#,
    r#"echo "a b" | { read -r x y; echo "$y $x"; }"#,
    r#"mapfile -t lines < a.txt; echo "${#lines[@]} ${lines[3]}""#,
    r#"greet() { echo "hi $1"; return 3; }; greet bob; echo $?"#,
    "f() { local x=1; echo $x; }; x=2; f; echo $x",
    r#"count() { echo $#; }; count a "b c" d"#,
    r#"f() { echo "$@"; echo "$*"; echo $#; }; f "a b" c"#,
    "fact() { if (( $1 <= 1 )); then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }; fact 5",
    r#"getopts_test() { while getopts "ab:" o; do echo "$o=${OPTARG:-}"; done; }; getopts_test -a -b val"#,
    r#"set -- x y z; shift; echo "$@" $#"#,
    r#"set -- $(echo a b c); shift 2; echo "$1" $#"#,
    r#"printf '%s\n' "${@:-none}""#,
    "trap 'echo bye' EXIT; echo hi",
    "sleep 0 & wait; echo waited",
    "sh -c 'echo in-sh $0 $1' zero one",
    "bash -c 'exit 5'; echo $?",
    "name=w\ncat <<EOF\nhi $name\nsum $((1+2))\nEOF",
    "cat <<'EOF'\n$literal `not run`\nEOF",
    "cat <<-EOF\n\tindented\n\tEOF",
    "cat <<EOF | grep -c o\none\ntwo\nthree\nEOF",
    "grep b <<< \"abc\nxyz\nbcd\"",
    r#"v="multi word"; cat <<< "$v""#,
    // set -e, pipefail, exit codes.
    "set -e; false; echo unreachable",
    "set -e; echo a; false; echo b",
    "set -e; if false; then :; fi; echo still",
    "set -e; false && true; echo survives",
    "set -e; x=$(false); echo not-reached",
    "set -e; f() { false; echo in-f; }; f || echo caught",
    r#"( set -e; false; echo no ); echo "sub: $?""#,
    "set -o pipefail; false | true; echo $?",
    "false | true; echo $?",
    "set -eo pipefail; grep x nope | sort; echo after",
    r#"set -o pipefail; grep nope a.txt | wc -l; echo "rc: $?""#,
    "true | false; echo ${PIPESTATUS[@]}",
    "set -u; echo $undefined_var; echo after",
    "out=$(false); echo $?",
    r#"cat a.txt | head -1; echo "rc=$?""#,
    "exit 3",
    "(exit 4); echo $?",
    "exit_fn() { return 42; }; exit_fn; echo $?",
    "nonexistent_cmd_xyz; echo $?",
    "! true; echo $?",
    r#"[ "$(echo hi)" = hi ] && echo eq"#,
    "grep -rn TODO . | sort",
    "grep -rn TODO | sort",
    "grep -rl fn src | sort",
    "grep -rn --include='*.rs' 'pub fn' . | sort",
    "grep -ri 'todo' --include='*.md' . | sort",
    "grep -rc TODO src | sort",
    "grep -rw main src | sort",
    "grep -h TODO -r src | sort",
    "cd -P src && ls",
];

/// Commands that change files, compared as [`COMPARED`] is, each in a
/// fresh copy of the fixture. Each prints what it changed (`sed -i ... &&
/// cat f`), so the change is compared too.
const COMPARED_WRITING: &[&str] = &[
    // Deleting with find, editing in place with sed.
    "find . -name '*.md' -delete && find . -name '*.md' | wc -l",
    "sed -i 's/beta/BETA/' a.txt && cat a.txt",
    "sed -i.bak 's/alpha/ALPHA/' a.txt && cat a.txt a.txt.bak",
    "sed -i '/TODO/d' src/main.rs && cat src/main.rs",
    r"sed -i -e 's/alpha/A/' -e '$a\omega' a.txt && cat a.txt",
    "find . -name '*.rs' | xargs sed -i 's/fn /FN /' && grep -c 'FN ' src/lib.rs",
    // patch.
    "patch -p1 < fix.patch && cat src/lib.rs",
    "patch -p1 < fix.patch && patch -R -p1 < fix.patch && cat src/lib.rs",
    "diff -u a.txt b.txt > d.patch; patch a.txt < d.patch && cat a.txt",
    // mkdir, touch, cp, mv, rm, ln, truncate, tee.
    "mkdir -p x/y/z && find x | sort",
    "mkdir -p d/{x,y} && ls d",
    "test -d dir || mkdir dir; ls -d dir",
    "mkdir e && rmdir e && ls -d e; echo $?",
    "mkdir -p a/b && cd a/b && touch f && cd - >/dev/null && find a | sort",
    "touch new.txt && ls",
    "touch -d '2001-01-01 00:00:00' a.txt && find . -newer a.txt -name 'b.txt'",
    "cp a.txt c.txt && cat c.txt",
    "cp -r src src2 && find src2 | sort",
    "mkdir dest && cp -r src/. dest/ && ls dest",
    "mv a.txt moved.txt && ls",
    "mkdir m && mv a.txt b.txt m/ && ls m",
    "mv src/util lib && find . -name '*.rs' | sort",
    "rm -r docs && ls",
    "rm -rf src tests && ls",
    "rm -r src/util && find src | sort",
    "[ -f a.txt ] && rm a.txt; ls a.txt; echo $?",
    "echo a.txt b.txt | xargs rm && ls *.txt",
    "ln -s a.txt link.txt && cat link.txt && readlink link.txt",
    "truncate -s 0 a.txt && wc -c a.txt",
    ": > a.txt; wc -c < a.txt",
    "echo hi | tee out.txt && cat out.txt",
    "echo zeta | tee -a a.txt >/dev/null && cat a.txt",
    "echo x | tee t1 t2 >/dev/null && cat t1 t2",
    // Checksum files and archives.
    "sha256sum a.txt b.txt > sums && sha256sum -c sums",
    "tar -cf out.tar src && tar -tf out.tar | sort",
    "tar -czf out.tgz docs && mkdir x && tar -xzf out.tgz -C x && find x | sort",
    "tar -czf x.tgz -C src . && tar -tzf x.tgz | sort",
    "tar -cvf out.tar docs | sort",
    "mkdir out && tar -cf a.tar src && tar -xf a.tar -C out && cat out/src/main.rs",
    // Redirections into files.
    "echo a > f && echo b >> f && cat f",
    "echo first > f; echo second > f; cat f",
    "cat < a.txt > copy.txt && cat copy.txt",
    "{ echo a; echo b >&2; } 2>&1 | tee log >/dev/null; cat log",
    "exec 3>f; echo x >&3; exec 3>&-; cat f",
    // Scripts and here-documents written to files.
    r"printf 'echo sourced $1\n' > lib.sh && source lib.sh arg && . ./lib.sh dot",
    r#"printf 'echo from-script "$@"\nexit 7\n' > s.sh && bash s.sh a b; echo $?"#,
    "cat > new.txt <<EOF && cat new.txt\nline one\nline two\nEOF",
    "cat > src/new.rs <<'EOF'\nfn new() -> &'static str {\n    \"$not_expanded\"\n}\nEOF\ncat src/new.rs",
    "printf '#!/bin/bash\\necho ran\\n' > s.sh && chmod +x s.sh && ./s.sh",
];

/// Commands whose stdout or exit code in the bash tool differs from
/// `/bin/bash`'s, and the difference seen; each runs in a fresh copy of
/// the fixture, and [`the_known_differences_still_differ`] keeps the list
/// true.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "ls -a",
        "bashkit lists no `.` and `..` entries (`ls -la` neither); the other names match",
    ),
    (
        "ls -l a.txt",
        "bashkit's long format is `-rw-r--r--       23 2020-09-13 12:26 a.txt`: no link \
         count, owner or group, the size in 8 columns and an ISO date, where GNU prints \
         `-rw-r--r-- 1 root root 23 Sep 13  2020 a.txt`",
    ),
    (
        "ls -r",
        "`ls: option(s) not yet implemented in bashkit: reverse`, exit 2 (-S likewise)",
    ),
    (
        "ls -1p",
        "`ls: option(s) not yet implemented in bashkit: p`, exit 2",
    ),
    (
        "wc < a.txt",
        "bashkit pads each count to 7 columns (`      4       4      23`); GNU sizes the \
         columns from the redirected file's size (` 4  4 23`). Through a pipe both pad to 7",
    ),
    (
        "diff -u a.txt b.txt",
        "bashkit's `---`/`+++` lines name the files without GNU's modification times \
         (`--- a.txt\\t2020-09-13 12:26:40.000000000 +0000`); the hunks are the same \
         (compared as `diff -u a.txt b.txt | tail -n +3`)",
    ),
    (
        "cp -r src src2 && echo changed >> src2/main.rs && diff -r src src2",
        "`diff: invalid option -- 'r'`, exit 2: bashkit's diff compares no directories",
    ),
    (
        "comm -12 a.txt b.txt",
        "on unsorted input bashkit exits 0; GNU prints the same lines but exits 1 (`comm: \
         file 1 is not in sorted order`)",
    ),
    (
        "jq -c 'del(.deps)' config.json",
        "bashkit's `del` of a key that is not the last moves the last key into its place \
         (`{..., \"tags\":null,\"private\":true}`); jq keeps the order (`\"private\":true, \
         \"tags\":null`). `del(.name)` puts `tags` first",
    ),
    (
        "sed -i '1i// header' src/lib.rs && patch -p1 < fix.patch; cat src/lib.rs",
        "bashkit's patch applies a hunk only at the line its header names: one line added \
         above the hunk fails it (`hunk at line 1 does not match`, exit 1, file unchanged) \
         where GNU patch applies it at an offset (`Hunk #1 succeeded at 2 (offset 1 \
         line).`); there is no fuzz either",
    ),
    (
        "printf 'x\\n' > src/lib.rs && patch -p1 < fix.patch",
        "a hunk that does not apply: both exit 1, but GNU says `patching file`, `Hunk #1 \
         FAILED at 1.` and where it saved the rejects on stdout (and writes `.rej` and \
         `.orig` files); bashkit says `hunk at line 1 does not match` on stderr and writes \
         neither",
    ),
    (
        "gzip -k a.txt && zcat a.txt.gz",
        "bashkit has gzip and gunzip but no zcat (exit 127); `gunzip -c` works",
    ),
];

/// The start of each command's record in the script's output, on a line
/// of its own: `@@@ case 007 <exit code>`.
const MARK: &str = "@@@ case";

/// The directory below a tree's root that the commands of [`COMPARED`]
/// share.
const SHARED: &str = "shared";

/// What one command did in one shell.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Its stdout, with the tree's root written `{ws}`.
    stdout: String,
    /// Its exit code; `None` when the script stopped before its record.
    code: Option<i32>,
}

#[test]
fn common_commands_print_and_exit_as_in_bash() {
    let reading = runnable(COMPARED.iter().copied());
    let writing = runnable(COMPARED_WRITING.iter().copied());
    let (tool, real) = run_both(&reading, &writing);
    let commands = reading.iter().chain(&writing);
    let differing: Vec<String> = commands
        .zip(tool.iter().zip(&real))
        .filter(|(_, (tool, real))| tool != real)
        .map(|(command, (tool, real))| mismatch(command, tool, real))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} commands differ from {REAL_BASH} (stdout or exit code); fix the tool, or \
         move a difference no phrasing avoids to KNOWN_DIFFERENCES with what differs:\n\n{}",
        differing.len(),
        reading.len() + writing.len(),
        differing.join("\n")
    );
}

#[test]
fn the_known_differences_still_differ() {
    let commands = runnable(KNOWN_DIFFERENCES.iter().map(|(command, _)| *command));
    let (tool, real) = run_both(&[], &commands);
    let alike: Vec<&str> = commands
        .iter()
        .zip(tool.iter().zip(&real))
        .filter(|(_, (tool, real))| tool == real)
        .map(|(command, _)| *command)
        .collect();
    assert!(
        alike.is_empty(),
        "these known differences now print and exit as {REAL_BASH} does; move them from \
         KNOWN_DIFFERENCES to COMPARED (or COMPARED_WRITING if they write):\n{}",
        alike.join("\n")
    );
}

#[test]
fn each_command_is_listed_once() {
    let mut seen = BTreeSet::new();
    let all = COMPARED
        .iter()
        .chain(COMPARED_WRITING)
        .chain(KNOWN_DIFFERENCES.iter().map(|(command, _)| command));
    for command in all {
        assert!(seen.insert(command), "listed twice: {command}");
    }
}

/// The commands of `list` this machine's bash can run: one that names an
/// [`OPTIONAL_PROGRAMS`] program the machine lacks is left out, and said.
fn runnable<'a>(list: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let lacking: Vec<&str> = OPTIONAL_PROGRAMS
        .iter()
        .copied()
        .filter(|program| !on_path(program))
        .collect();
    list.filter(|command| match lacking.iter().find(|p| names(command, p)) {
        Some(program) => {
            eprintln!("not compared (this machine has no `{program}`): {command}");
            false
        }
        None => true,
    })
    .collect()
}

/// Whether the real bash finds `program`.
fn on_path(program: &str) -> bool {
    Command::new(REAL_BASH)
        .args(["-c", "command -v \"$1\"", "bash", program])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run bash")
        .success()
}

/// Whether `command` has `program` as a word.
fn names(command: &str, program: &str) -> bool {
    command
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(|word| word == program)
}

/// Runs the commands in the bash tool and in [`REAL_BASH`], `reading` in
/// one shared copy of the fixture and each of `writing` in its own, and
/// returns what each did (in that order) in the tool, then in bash.
fn run_both(reading: &[&str], writing: &[&str]) -> (Vec<Outcome>, Vec<Outcome>) {
    assert!(
        Path::new(REAL_BASH).exists(),
        "this test compares the bash tool with {REAL_BASH}, which this machine lacks"
    );
    let commands: Vec<&str> = reading.iter().chain(writing).copied().collect();
    let places: Vec<String> = (0..commands.len())
        .map(|index| match index < reading.len() {
            true => SHARED.to_string(),
            false => format!("cases/{}", case_name(index)),
        })
        .collect();
    let script = script(&places);

    // The workspace lies below the temp dir as a project lies in a home
    // directory: the shell reaches none of its ancestors. (Right under
    // `/tmp` its one ancestor would be the shell's in-memory `/tmp`, which
    // hides what fails in every real workspace.)
    let ws = Workspace::new();
    let project = ws.mkdir("home/project");
    plant(&project, &commands, &places);
    let input = serde_json::json!({ "command": script }).to_string();
    let mut call = ws.toolhost();
    call.current_dir(&project)
        .args(["--allow-write", "bash=.", "call", "bash", "-"])
        .write_stdin(input);
    let tool = outcomes(&stdout_of(&mut call), &project, commands.len());

    let tree = tempfile::tempdir().expect("a tree for the real bash");
    plant(tree.path(), &commands, &places);
    let real = real_bash(tree.path(), &script);
    let real = outcomes(&real, tree.path(), commands.len());

    if !reading.is_empty() {
        for (shell, root) in [("the bash tool", &*project), (REAL_BASH, tree.path())] {
            let changes = changes(&root.join(SHARED));
            assert!(
                changes.is_empty(),
                "in {shell}, a command of COMPARED changed the fixture the commands share; \
                 move it to COMPARED_WRITING:\n{}",
                changes.join("\n")
            );
        }
    }
    (tool, real)
}

/// The script both shells run from the root of a tree [`plant`] made:
/// command N runs in the directory `places[N]`, sourced in a subshell
/// (`exit`, `cd`, `set -e` and traps end with it) with no stdin and
/// stderr dropped, and then its record follows on a line of its own.
/// Sourcing keeps a syntax bashkit rejects to that command.
fn script(places: &[String]) -> String {
    let mut script = String::from("__root=$PWD\n");
    for (index, place) in places.iter().enumerate() {
        let case = case_name(index);
        writeln!(
            script,
            "cd \"$__root/{place}\"\n\
             ( . \"$__root/cmds/{case}\" ) </dev/null 2>/dev/null\n\
             printf '\\n{MARK} {case} %d\\n' \"$?\""
        )
        .expect("write to a String");
    }
    script
}

/// A command's number in a run, as its file and directory name: `007`.
fn case_name(index: usize) -> String {
    format!("{index:03}")
}

/// Fills `root` with a copy of the fixture at each of `places` and with
/// the commands (`cmds/007`), outside the copies so no listing shows them.
fn plant(root: &Path, commands: &[&str], places: &[String]) {
    let copies: BTreeSet<&String> = places.iter().collect();
    for copy in copies {
        for (relative, content) in FIXTURE {
            let path = root.join(copy).join(relative);
            let parent = path.parent().expect("a fixture file has a directory");
            fs::create_dir_all(parent).expect("create a fixture directory");
            let mut file = fs::File::create(&path).expect("create a fixture file");
            file.write_all(content.as_bytes())
                .expect("write a fixture file");
            file.set_modified(planted_mtime(relative))
                .expect("set a fixture file's modification time");
        }
    }
    fs::create_dir_all(root.join("cmds")).expect("create cmds/");
    for (index, command) in commands.iter().enumerate() {
        let path = root.join("cmds").join(case_name(index));
        fs::write(path, format!("{command}\n")).expect("write a command");
    }
}

/// The modification time a fixture file is planted with.
fn planted_mtime(relative: &str) -> SystemTime {
    let secs = match NEWER.contains(&relative) {
        true => NEW_MTIME,
        false => OLD_MTIME,
    };
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// How the copy of the fixture at `copy` differs from the fixture as
/// planted: paths added or removed, files whose content or modification
/// time changed.
fn changes(copy: &Path) -> Vec<String> {
    let mut planted = BTreeSet::new();
    for (relative, _) in FIXTURE {
        let mut path = Path::new(relative);
        while !path.as_os_str().is_empty() {
            planted.insert(path.display().to_string());
            path = path.parent().expect("a relative path has a parent");
        }
    }
    let mut found = BTreeSet::new();
    list(copy, copy, &mut found);
    let mut changes: Vec<String> = found
        .difference(&planted)
        .map(|path| format!("added {path}"))
        .collect();
    changes.extend(
        planted
            .difference(&found)
            .map(|path| format!("removed {path}")),
    );
    for (relative, content) in FIXTURE {
        let path = copy.join(relative);
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let now = fs::read(&path).unwrap_or_default();
        let modified = meta.modified().expect("a file's modification time");
        if now != content.as_bytes() || modified != planted_mtime(relative) {
            changes.push(format!("changed {relative}"));
        }
    }
    changes
}

/// Adds every path below `dir` to `found`, relative to `root`.
fn list(root: &Path, dir: &Path, found: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).expect("list a copy of the fixture") {
        let path = entry.expect("a directory entry").path();
        let relative = path.strip_prefix(root).expect("below the root");
        found.insert(relative.display().to_string());
        if fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
            list(root, &path, found);
        }
    }
}

/// The stdout of `script` run by [`REAL_BASH`] at `root`, in an
/// environment of its own: C collation for `sort`, UTC for `date`, and
/// `HOME` the tree's root as the tool's is its workspace.
fn real_bash(root: &Path, script: &str) -> String {
    let home = root.canonicalize().expect("the tree's canonical path");
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let output = Command::new(REAL_BASH)
        .args(["-c", script])
        .current_dir(root)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    assert!(
        output.status.success(),
        "{REAL_BASH} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Each command's outcome from the output of [`script`] run at `root`.
/// Nothing may follow the last record: a `--- stderr ---`, `exit code` or
/// `--- toolhost ---` section there means the script itself went wrong.
fn outcomes(output: &str, root: &Path, count: usize) -> Vec<Outcome> {
    let canonical = root.canonicalize().expect("the tree's canonical path");
    let roots = [canonical.display().to_string(), root.display().to_string()];
    let mut rest = output;
    let mut found = Vec::with_capacity(count);
    for case in (0..count).map(case_name) {
        let mark = format!("\n{MARK} {case} ");
        let Some((stdout, after)) = rest.split_once(&mark) else {
            found.push(Outcome {
                stdout: String::new(),
                code: None,
            });
            continue;
        };
        let (code, after) = after.split_once('\n').expect("a record is one line");
        let stdout = roots
            .iter()
            .fold(stdout.to_string(), |text, root| text.replace(root, "{ws}"));
        found.push(Outcome {
            stdout,
            code: Some(code.parse().expect("an exit code")),
        });
        rest = after;
    }
    assert!(
        rest.is_empty(),
        "the script's output goes on after its last record:\n{rest}"
    );
    found
}

/// The failure text for one command that differs.
fn mismatch(command: &str, tool: &Outcome, real: &Outcome) -> String {
    let show = |outcome: &Outcome| match outcome.code {
        Some(code) => format!("(exit {code}):\n{}", outcome.stdout),
        None => "(no record: the script stopped before it)\n".to_string(),
    };
    format!(
        "`{command}`\n--- the bash tool {}--- {REAL_BASH} {}",
        show(tool),
        show(real)
    )
}
