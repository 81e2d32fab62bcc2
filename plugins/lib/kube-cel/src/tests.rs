//! Cases from kube's own library tests: k8s.io/apiserver/pkg/cel/library/
//! quantity_test.go, lists_test.go, regex_test.go, urls_test.go,
//! ip_test.go, cidr_test.go, and cel-go's ext/strings_test.go.

use cel::Value;

fn eval(expression: &str) -> Result<Value, String> {
    let program = crate::compile(expression)?;
    program
        .execute(&crate::context())
        .map_err(|e| e.to_string())
}

fn assert_true(expressions: &[&str]) {
    for expression in expressions {
        assert_eq!(eval(expression), Ok(Value::Bool(true)), "{expression}");
    }
}

fn assert_error(expression: &str, message: &str) {
    match eval(expression) {
        Err(e) => assert!(e.contains(message), "{expression}: {e}"),
        Ok(v) => panic!("{expression}: {v:?}"),
    }
}

// quantity_test.go (its out-of-int64 case scaled down: the shared parser
// keeps 36 significant digits)
#[test]
fn quantity() {
    assert_true(&[
        "quantity('12Mi') == quantity('12582912')",
        "isQuantity('20')",
        "isQuantity('200M')",
        "!isQuantity('20Mo')",
        "!isQuantity('10Mi10Mi')",
        "quantity('50M').isInteger()",
        "!quantity('99999999999G').isInteger()",
        "quantity('50703M').asInteger() == 50703000000",
        "quantity('50.703m').asApproximateFloat() == 0.050703",
        "quantity('50M').sign() == 1",
        "quantity('-50M').sign() == -1",
        "quantity('0').sign() == 0",
        "quantity('50k').add(quantity('20')) == quantity('50.02k')",
        "quantity('50k').add(20) == quantity('50020')",
        "quantity('50k').sub(quantity('20')) == quantity('49980')",
        "quantity('50k').sub(20) == quantity('49980')",
        "quantity('200M').compareTo(quantity('0.2G')) == 0",
        "quantity('50M').compareTo(quantity('50Mi')) == -1",
        "quantity('50Mi').compareTo(quantity('50M')) == 1",
        "quantity('50M').isLessThan(quantity('50Mi'))",
        "quantity('50Mi').isGreaterThan(quantity('50M'))",
        "!quantity('50M').isGreaterThan(quantity('50Mi'))",
    ]);
    assert_error(
        "quantity('Th1s 1s n0t a qu4ntity')",
        "quantities must match",
    );
    assert_error(
        "quantity('99999999999G').asInteger()",
        "cannot convert value to integer",
    );
}

// lists_test.go
#[test]
fn lists() {
    assert_true(&[
        "[1, 2, 3].isSorted()",
        "!['b', 'a'].isSorted()",
        "[].isSorted()",
        "[1, 2, 3].sum() == 6",
        "[1.0, 2.5].sum() == 3.5",
        "[].sum() == 0",
        "[1, 2, 3].min() == 1",
        "[3, 1, 2].max() == 3",
        "['a', 'b'].max() == 'b'",
        "[1, 2, 2, 3].indexOf(2) == 1",
        "[1, 2, 2, 3].lastIndexOf(2) == 2",
        "[1, 2].indexOf(4) == -1",
        "['a', 'b'].indexOf('b') == 1",
    ]);
    assert_error("[].min()", "min called on empty list");
    assert_error("[].max()", "max called on empty list");
}

// regex_test.go
#[test]
fn regex() {
    assert_true(&[
        "'abc 123'.find('[0-9]+') == '123'",
        "'abc'.find('[0-9]+') == ''",
        "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
        "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
        "'123 abc 456'.findAll('[0-9]+', 0) == []",
        "'abc'.findAll('[0-9]+') == []",
    ]);
}

// urls_test.go
#[test]
fn urls() {
    assert_true(&[
        "url('https://user:pass@example.com:80/path?query=val#fragment').getScheme() == 'https'",
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        "url('https://example.com/').getHost() == 'example.com'",
        "url('https://[::1]:80/').getHost() == '[::1]:80'",
        "url('https://[::1]:80/').getHostname() == '::1'",
        "url('https://example.com:80/').getHostname() == 'example.com'",
        "url('https://example.com:80/').getPort() == '80'",
        "url('https://example.com/').getPort() == ''",
        "url('https://example.com/path').getEscapedPath() == '/path'",
        "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
        "url('https://example.com').getEscapedPath() == ''",
        "url('https://example.com/?k=a&k=b&k2=c').getQuery() == {'k': ['a', 'b'], 'k2': ['c']}",
        "url('https://example.com/?key=').getQuery() == {'key': ['']}",
        "url('https://example.com/').getQuery() == {}",
        "url('/path').getScheme() == ''",
        "url('https://example.com/path#frag').getEscapedPath() == '/path'",
        "url('https://example.com/?a=b#frag').getQuery() == {'a': ['b']}",
        "url('/path?a=b').getEscapedPath() == '/path'",
        "isURL('https://example.com/')",
        "isURL('/absolute-path')",
        "!isURL('../relative-path')",
        "!isURL('https://example.com/%')",
        "!isURL('https://example.com:abc/')",
    ]);
    assert_error(
        "url('../relative-path')",
        "URL parse error during conversion from string",
    );
}

// ip_test.go and cidr_test.go
#[test]
fn ip_and_cidr() {
    assert_true(&[
        "isIP('192.168.0.1')",
        "ip.isCanonical('127.0.0.1')",
        "ip.isCanonical('2001:db8::68')",
        "!ip.isCanonical('2001:DB8::68')",
        "!ip.isCanonical('2001:db8:0:0:0:0:0:68')",
        "isIP('2001:db8::68')",
        "!isIP('192.168.0.1/24')",
        "!isIP('::ffff:c0a8:1')",
        "!isIP('fe80::1%en0')",
        "ip('192.168.0.1').family() == 4",
        "ip('2001:db8::68').family() == 6",
        "ip('127.0.0.1').isLoopback()",
        "ip('::1').isLoopback()",
        "ip('0.0.0.0').isUnspecified()",
        "ip('224.0.0.1').isLinkLocalMulticast()",
        "ip('ff02::1').isLinkLocalMulticast()",
        "ip('169.254.169.254').isLinkLocalUnicast()",
        "ip('fe80::1').isLinkLocalUnicast()",
        "ip('192.168.0.1').isGlobalUnicast()",
        "!ip('255.255.255.255').isGlobalUnicast()",
        "ip('127.0.0.1') == ip('127.0.0.1')",
        "isCIDR('192.168.0.0/24')",
        "!isCIDR('192.168.0.0/33')",
        "!isCIDR('192.168.0.0')",
        "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
        "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
        "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
        "!cidr('192.168.0.0/24').containsIP('2001:db8::1')",
        "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))",
        "cidr('192.168.0.0/24').containsCIDR('192.168.0.128/25')",
        "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')",
        "cidr('192.168.0.0/24').prefixLength() == 24",
        "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
        "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
        "cidr('2001:db8::/32').containsIP('2001:db8::1')",
        "string(ip('2001:db8::68')) == '2001:db8::68'",
        "string(cidr('192.168.0.1/24')) == '192.168.0.1/24'",
        "string(cidr('192.168.0.1/24').masked()) == '192.168.0.0/24'",
        "string(1) == '1'",
    ]);
    assert_error(
        "ip('::ffff:c0a8:1')",
        "IPv4-mapped IPv6 address \"::ffff:c0a8:1\" is not allowed",
    );
    assert_error(
        "ip('fe80::1%en0')",
        "IP address \"fe80::1%en0\" with zone value is not allowed",
    );
    // Go's inner ParseAddr reason ("IPv4 address too long") is not copied.
    assert_error(
        "ip('192.168.0.1.0')",
        "IP Address \"192.168.0.1.0\" parse error during conversion from string: ParseAddr(",
    );
    assert_error(
        "cidr('192.168.0.0/33')",
        "network address parse error during conversion from string: network address parse error",
    );
}

// semverlib_test.go
#[test]
fn semver() {
    assert_true(&[
        "isSemver('1.0.0')",
        "isSemver('1.0.0-alpha.1+build.5')",
        "!isSemver('1.0')",
        "!isSemver('v1.0.0')",
        "!isSemver('01.01.01')",
        "isSemver('v1.0', true)",
        "isSemver('01.01.01', true)",
        "!isSemver('1-alpha', true)",
        "semver('v01.02', true) == semver('1.2.0')",
        "semver('1.2.3').major() == 1",
        "semver('1.2.3').minor() == 2",
        "semver('1.2.3').patch() == 3",
        "semver('1.2.3').compareTo(semver('1.2.3')) == 0",
        "semver('1.2.3').compareTo(semver('2.0.0')) == -1",
        "semver('1.2.3').compareTo(semver('0.1.2')) == 1",
        "semver('1.0.0').isGreaterThan(semver('1.0.0-alpha'))",
        "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))",
        "semver('1.0.0+a').compareTo(semver('1.0.0+b')) == 0",
        "semver('1.2.3') == semver('1.2.3')",
    ]);
    assert_error("semver('1.0')", "semver");
}

// cel-go ext/strings_test.go, as kube enables the extension
#[test]
fn strings() {
    assert_true(&[
        "'tacocat'.charAt(3) == 'o'",
        "'tacocat'.indexOf('a') == 1",
        "'tacocat'.lastIndexOf('a') == 5",
        "'TacoCat'.lowerAscii() == 'tacocat'",
        "'TacoCat'.upperAscii() == 'TACOCAT'",
        "'hello hello'.replace('he', 'we') == 'wello wello'",
        "'hello hello hello'.split(' ') == ['hello', 'hello', 'hello']",
        "'tacocat'.substring(4) == 'cat'",
        "'tacocat'.substring(0, 4) == 'taco'",
        "'  \\ttrim\\n '.trim() == 'trim'",
        "['x', 'y'].join('-') == 'x-y'",
        "'gums'.reverse() == 'smug'",
        "strings.quote('first\\nsecond') == '\"first\\\\nsecond\"'",
    ]);
}

/// The guarded `replace`, `split`, `join` and `matches` (they answer
/// every call) behave as the crate's own, wrong types included.
#[test]
fn guarded_functions_keep_the_strings_extension_s_behaviour() {
    assert_true(&[
        "'hello hello'.replace('he', 'we', 1) == 'wello hello'",
        "'hello hello'.replace('he', 'we', -1) == 'wello wello'",
        "'hello hello'.replace('he', 'we', 0) == 'hello hello'",
        "'ab'.replace('', '-') == '-a-b-'",
        "'12 days 12 hours'.replace('{0}', '2') == '12 days 12 hours'",
        "'hello hello hello'.split(' ', 0) == []",
        "'hello hello hello'.split(' ', 1) == ['hello hello hello']",
        "'hello hello hello'.split(' ', 2) == ['hello', 'hello hello']",
        "'hello hello hello'.split(' ', -1) == ['hello', 'hello', 'hello']",
        "'tacocat'.split('') == ['t', 'a', 'c', 'o', 'c', 'a', 't']",
        "'tacocat'.split('', 3) == ['t', 'a', 'cocat']",
        "''.split(' ') == ['']",
        "['x', 'y'].join() == 'xy'",
        "[].join('-') == ''",
        "'abc'.matches('^[a-c]+$')",
        "matches('abc', 'b')",
        r"!'été'.matches('^\\w+$')",
    ]);
    assert_error("'a'.replace(1, 'b')", "no matching overload");
    assert_error("'a'.split(1)", "no matching overload");
    assert_error("[1].join()", "string");
    assert_error("'a'.matches(1)", "no matching overload");
    assert_error(
        "'a'.matches('(')",
        "error parsing regexp: unclosed group: `(`",
    );
}

/// What the estimate computed before evaluating cannot see is stopped
/// inside the evaluator: five chained replaces on 64 characters would
/// build a string of 64^6 characters; the guard refuses the call whose
/// result the budget cannot afford, before building it.
#[test]
fn the_runtime_budget_stops_amplification_before_it_allocates() {
    let program = crate::compile(
        "s.replace('a', t).replace('a', t).replace('a', t).replace('a', t).replace('a', t) != ''",
    )
    .unwrap();
    let mut context = crate::context();
    context.add_variable_from_value("s", "a".repeat(64));
    context.add_variable_from_value("t", "a".repeat(64));
    let (result, spent) = crate::metered(crate::Budget::per_call(), || program.execute(&context));
    let error = result.expect_err("refused");
    assert!(
        error
            .to_string()
            .contains(crate::runtime::COST_LIMIT_EXCEEDED),
        "{error}"
    );
    assert!(spent.exceeded && spent.cost <= crate::rules::cost::PER_CALL_LIMIT);
    // Unmetered, the absolute bound still refuses what would be 68 GB.
    let unmetered = program.execute(&context).expect_err("refused");
    assert!(unmetered
        .to_string()
        .contains(crate::runtime::COST_LIMIT_EXCEEDED));
}

#[test]
fn unknown_overloads_are_errors_not_panics() {
    assert_error("quantity('1').add('x')", "no such overload");
    assert_error("'x'.getScheme()", "no such overload");
}

// format_test.go
#[test]
fn format() {
    assert_true(&[
        "!format.dns1123Label().validate('my-name').hasValue()",
        "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
        "format.named('dns1123Label').hasValue()",
        "!format.named('nope').hasValue()",
        "format.named('labelValue').value().validate('-x').hasValue()",
        "!format.dns1123LabelPrefix().validate('my-').hasValue()",
        "!format.dns1035Label().validate('abc-123').hasValue()",
        "format.dns1035Label().validate('1abc').hasValue()",
        "!format.dns1123Subdomain().validate('example.com').hasValue()",
        "!format.qualifiedName().validate('example.com/MyName').hasValue()",
        "format.qualifiedName().validate('a/b/c').hasValue()",
        "!format.uri().validate('https://example.com/x').hasValue()",
        "format.uri().validate('example').value() == ['parse \"example\": invalid URI for request']",
        "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
        "format.uuid().validate('x').value() == ['does not match the UUID format']",
        "!format.byte().validate('aGVsbG8=').hasValue()",
        "format.byte().validate('a').value() == ['invalid base64']",
        "!format.date().validate('2024-02-29').hasValue()",
        "format.date().validate('2023-02-29').value() == ['invalid date']",
        "!format.datetime().validate('2021-01-01T00:00:00Z').hasValue()",
        "format.datetime().validate('2021-01-01').value() == ['invalid datetime']",
    ]);
    assert_eq!(
        eval("format.dns1123Label().validate('Foo').value()[0]"),
        Ok(Value::from(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \
             '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or \
             '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ))
    );
}

// cel-go's ext/sets_test.go
#[test]
fn sets() {
    assert_true(&[
        "sets.contains([1, 2, 3], [1, 2])",
        "sets.contains([], [])",
        "!sets.contains([1], [1, 2])",
        "sets.equivalent([1, 2], [2, 1, 1])",
        "!sets.equivalent([1, 2], [1])",
        "sets.intersects([1, 2], [2, 3])",
        "!sets.intersects([1], [])",
        "sets.contains(['a', 'b'], ['b'])",
    ]);
}

// optionals, as kube's environment enables them (cel.OptionalTypes)
#[test]
fn optionals() {
    assert_true(&[
        "{'a': 1}.?a.orValue(0) == 1",
        "{'a': 1}.?b.orValue(0) == 0",
        "optional.of(1).hasValue()",
        "!optional.none().hasValue()",
        "[1, 2][?5].orValue(7) == 7",
    ]);
}

/// cel-go's wording, as kube-apiserver 1.32 answers a ValidatingAdmissionPolicy
/// whose expression does not parse (checked against the real server).
#[test]
fn compile_errors_quote_the_source_as_cel_go() {
    let err = crate::compile("object.metadata.name ===").unwrap_err();
    assert!(
        err.starts_with("ERROR: <input>:1:24: Syntax error: token recognition error at: '='\n | object.metadata.name ===\n | .......................^"),
        "{err}"
    );
}

#[test]
fn nested_comprehensions_over_large_lists_stop_at_the_per_call_limit() {
    let mut context = crate::context();
    let items: Vec<i64> = (0..3000).collect();
    context.add_variable_from_value("items", items);
    // 3000 × 3000 steps: stopped once the steps pass 1M.
    let program = crate::compile("items.all(x, items.all(y, x + y >= 0))").unwrap();
    let started = std::time::Instant::now();
    let (result, spent) = crate::metered(crate::Budget::per_call(), || program.execute(&context));
    let err = result.expect_err("stopped");
    assert!(
        err.to_string()
            .contains(crate::runtime::COST_LIMIT_EXCEEDED),
        "{err}"
    );
    assert!(spent.exceeded);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // One level over the same list is well within it, and the macros keep
    // their meaning.
    assert_true(&[
        "[1, 2, 3].all(x, x > 0)",
        "[1, 2, 3].exists(x, x == 2)",
        "[1, 2, 3].exists_one(x, x == 2)",
        "[1, 2, 3].map(x, x * 2) == [2, 4, 6]",
        "[1, 2, 3].map(x, x > 1, x * 2) == [4, 6]",
        "[1, 2, 3].filter(x, x > 1) == [2, 3]",
        "{'a': 1}.all(k, k == 'a')",
        "has({'a': 1}.a)",
    ]);
    let (ok, _) = crate::metered(crate::Budget::per_call(), || {
        crate::compile("items.all(x, x >= 0)")
            .unwrap()
            .execute(&context)
    });
    assert_eq!(ok, Ok(Value::Bool(true)));
}
