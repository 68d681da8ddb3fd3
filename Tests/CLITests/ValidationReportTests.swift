import Foundation
import TestTools
import XCTest

/// `asicfs verify --report=FILE`: an ETSI TS 119 102-2 validation report. The XSD ETSI publishes
/// is not packaged by Debian or PyPI; pyHanko's model generated from it is (PyPI), so each
/// report is parsed into that model by xsdata, which refuses any element or attribute the
/// schema does not have (scripts/setup-etsi-report-model.sh). The rest is checked by the test's
/// own rules: xmllint reads it, every element sits in the order TS 119 102-2's types give,
/// every VOReference resolves, and the evidence is the real thing (openssl reads the
/// certificates, the time-stamp token and the OCSP response; the SignatureValue is the
/// signature's own).
final class ValidationReportTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    static var folder: String { shared.folder }

    override class func setUp() { shared = SharedTestServices(label: "cli-report") }
    override class func tearDown() { shared.stop() }

    var services: TestServices { get throws { try XCTUnwrap(Self.shared.services, "the loopback TSA/OCSP services") } }
    var settings: [String] {
        get throws {
            ["-o", "tsa-url=\(try services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(try services.pki.root)",
             "-o", "cache-dir=\(Self.folder)/cache"]
        }
    }

    func signedContainer() throws -> String {
        assertSuccess(try asicfs(["create", "doc.asice", try write("contract.txt", "the contract\n")]))
        let pass = try write("pass", TestPKI.passphrase + "\n")
        assertSuccess(try asicfs(["sign", path("doc.asice"), "--method", "pkcs12", "file=\(try services.pki.signerP12)",
                                  "passphrase-file=\(pass)"] + settings))
        return path("doc.asice")
    }

    /// The report's structure by TS 119 102-2's sequences, and what it says, as JSON.
    static let checker = #"""
    import base64, json, re, sys, zipfile
    import xml.etree.ElementTree as ET
    VR = '{http://uri.etsi.org/19102/v1.2.1#}'
    DS = '{http://www.w3.org/2000/09/xmldsig#}'
    ORDER = {
        'ValidationReport': ['SignatureValidationReport', 'SignatureValidationObjects', 'SignatureValidator'],
        'SignatureValidationReport': ['SignatureIdentifier', 'ValidationConstraintsEvaluationReport', 'ValidationTimeInfo',
            'SignersDocument', 'SignatureAttributes', 'SignerInformation', 'SignatureQuality', 'SignatureValidationProcess',
            'SignatureValidationStatus'],
        'SignatureIdentifier': ['DigestAlgAndValue', DS + 'SignatureValue', 'HashOnly', 'DocHashOnly', 'DAIdentifier'],
        'ValidationConstraint': ['ValidationConstraintIdentifier', 'ValidationConstraintParameter', 'ConstraintStatus', 'ValidationStatus'],
        'ValidationTimeInfo': ['ValidationTime', 'BestSignatureTime'],
        'BestSignatureTime': ['POETime', 'TypeOfProof', 'POEObject'],
        'SignerInformation': ['SignerCertificate', 'Signer'],
        'SignatureValidationStatus': ['MainIndication', 'SubIndication', 'AssociatedValidationReportData'],
        'ValidationStatus': ['MainIndication', 'SubIndication', 'AssociatedValidationReportData'],
        'AssociatedValidationReportData': ['TrustAnchor', 'CertificateChain', 'RelatedValidationObject',
            'RevocationStatusInformation', 'CryptoInformation', 'AdditionalValidationReportData'],
        'CertificateChain': ['SigningCertificate', 'IntermediateCertificate', 'TrustAnchor'],
        'ValidationObject': ['ObjectType', 'ValidationObjectRepresentation', 'POE', 'POEProvisioning', 'ValidationReport'],
        'ReportData': ['Type', 'Value'],
    }
    REQUIRED = {'SignatureValidationReport': ['SignatureValidationStatus'], 'SignatureIdentifier': ['HashOnly', 'DocHashOnly'],
                'SignatureValidationStatus': ['MainIndication'], 'ValidationObject': ['ObjectType', 'ValidationObjectRepresentation'],
                'ValidationConstraint': ['ValidationConstraintIdentifier', 'ConstraintStatus'], 'ValidationTimeInfo': ['ValidationTime']}
    problems = []
    def name(e):
        return e.tag[len(VR):] if e.tag.startswith(VR) else e.tag
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != VR + 'ValidationReport': problems.append('root is ' + root.tag)
    for e in root.iter():
        if e.tag.startswith(VR) or e.tag.startswith(DS):
            pass
        else:
            problems.append('element outside the namespaces: ' + e.tag)
        order = ORDER.get(name(e))
        kids = [name(k) for k in e]
        if order is not None:
            positions = [order.index(k) if k in order else -1 for k in kids]
            if -1 in positions or positions != sorted(positions):
                problems.append('%s children out of order: %s' % (name(e), kids))
        for needed in REQUIRED.get(name(e), []):
            if needed not in kids: problems.append('%s lacks %s' % (name(e), needed))
    ids = {e.get('id'): e for e in root.iter(VR + 'ValidationObject')}
    for e in root.iter():
        ref = e.get('VOReference')
        if ref is not None and ref not in ids: problems.append('VOReference %s resolves to nothing' % ref)
    def obj(ref):
        if ref not in ids: return b''
        return base64.b64decode(ids[ref].find(VR + 'ValidationObjectRepresentation/' + VR + 'base64').text)
    reports = []
    for report in root.findall(VR + 'SignatureValidationReport'):
        status = report.find(VR + 'SignatureValidationStatus')
        chain = status.find(VR + 'AssociatedValidationReportData/' + VR + 'CertificateChain')
        value = report.find(VR + 'SignatureIdentifier/' + DS + 'SignatureValue')
        stamps = report.findall(VR + 'SignatureAttributes/' + VR + 'SignatureTimeStamp/' + VR + 'AttributeObject')
        ocsp = report.findall(VR + 'SignatureAttributes/' + VR + 'RevocationValues/' + VR + 'AttributeObject')
        out = {'main': status.find(VR + 'MainIndication').text,
               'sub': [s.text for s in status.findall(VR + 'SubIndication')],
               'signatureValue': value.text if value is not None else None,
               'identifier': report.find(VR + 'SignatureIdentifier/' + VR + 'DigestAlgAndValue/' + DS + 'DigestValue').text,
               'constraints': {c.find(VR + 'ValidationConstraintIdentifier').text: c.find(VR + 'ValidationStatus/' + VR + 'MainIndication').text
                               for c in report.iter(VR + 'ValidationConstraint')},
               'findings': [d.find(VR + 'Type').text for d in report.iter(VR + 'ReportData')]}
        if chain is not None:
            out['signer'] = obj(chain.find(VR + 'SigningCertificate').get('VOReference')).hex()
            anchor = chain.find(VR + 'TrustAnchor')
            out['anchor'] = obj(anchor.get('VOReference')).hex() if anchor is not None else None
        out['timestamps'] = [obj(s.get('VOReference')).hex() for s in stamps]
        out['ocsp'] = [obj(s.get('VOReference')).hex() for s in ocsp]
        reports.append(out)
    print(json.dumps({'problems': problems, 'reports': reports}))
    """#

    /// Parses the report into pyHanko's TS 119 102-2 model, strictly.
    static let modelCheck = """
        import sys
        from pyhanko.generated.etsi import ts_11910202
        from xsdata.formats.dataclass.parsers import XmlParser
        from xsdata.formats.dataclass.parsers.config import ParserConfig
        config = ParserConfig(fail_on_unknown_properties=True, fail_on_unknown_attributes=True, fail_on_converter_warnings=True)
        report = XmlParser(config=config).parse(sys.argv[1], ts_11910202.ValidationReport)
        print(len(report.signature_validation_report))
        """

    func check(_ report: String) throws -> (problems: [String], reports: [[String: Any]]) {
        let lint = try runTool("/usr/bin/xmllint", ["--noout", report])
        XCTAssertEqual(lint.status, 0, lint.stderr)
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["ASICFS_ETSI_MODEL_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/etsi-report-venv")
        if FileManager.default.isExecutableFile(atPath: venv + "/bin/python") {
            let model = try runTool(venv + "/bin/python", ["-c", Self.modelCheck, report])
            XCTAssertEqual(model.status, 0, "the TS 119 102-2 model refuses the report: \(model.stderr)")
        } else {
            XCTFail("the TS 119 102-2 model is not installed at \(venv): run scripts/setup-etsi-report-model.sh (make test does)")
        }
        let result = try runTool("/usr/bin/env", ["python3", "-c", Self.checker, report])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any])
        return (object["problems"] as? [String] ?? ["no problems list"], object["reports"] as? [[String: Any]] ?? [])
    }

    /// Hex DER bytes through `openssl SUBCOMMAND -inform DER ...`; its output.
    func openssl(_ hex: String, _ arguments: [String]) throws -> String {
        let file = try write("object-\(UUID().uuidString.prefix(6)).der", Data(hexString: hex))
        let result = try runTool("/usr/bin/openssl", arguments.map { $0 == "IN" ? file : $0 })
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func testAValidSignatureGivesAReportWithItsEvidence() throws {
        let container = try signedContainer()
        let file = path("report.xml")
        let verify = try asicfs(["verify", container, "--report=\(file)"] + settings)
        assertSuccess(verify)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: VALID\n"), verify.stdout)
        let (problems, reports) = try check(file)
        XCTAssertEqual(problems, [])
        let report = try XCTUnwrap(reports.first)
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(report["main"] as? String, "urn:etsi:019102:mainindication:total-passed")
        XCTAssertEqual(report["sub"] as? [String], [])
        let constraints = try XCTUnwrap(report["constraints"] as? [String: String])
        XCTAssertGreaterThanOrEqual(constraints.count, 8)
        XCTAssertTrue(constraints.values.allSatisfy { $0.hasSuffix("total-passed") }, "\(constraints)")

        // The identifier's SignatureValue is the one in the signature document.
        let signatureXML = try runTool("/usr/bin/env", ["python3", "-c",
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('META-INF/signatures0.xml').decode())", container]).stdout
        let value = try XCTUnwrap(report["signatureValue"] as? String)
        XCTAssertTrue(signatureXML.replacingOccurrences(of: "\n", with: "").contains(">\(value)<"), "SignatureValue differs")
        // The chain runs from the signer to the test root; the token and the OCSP response are real.
        XCTAssertTrue(try openssl(try XCTUnwrap(report["signer"] as? String), ["x509", "-inform", "DER", "-in", "IN", "-noout", "-subject"])
            .contains("38001085718"))
        let root = try runTool("/usr/bin/openssl", ["x509", "-in", try services.pki.root, "-outform", "DER"]).stdoutData
        XCTAssertEqual(report["anchor"] as? String, root.map { String(format: "%02x", $0) }.joined())
        let token = try XCTUnwrap((report["timestamps"] as? [String])?.first)
        XCTAssertTrue(try openssl(token, ["ts", "-reply", "-token_in", "-in", "IN", "-text"]).contains("Time stamp:"))
        let ocsp = try XCTUnwrap((report["ocsp"] as? [String])?.first)
        XCTAssertTrue(try openssl(ocsp, ["ocsp", "-respin", "IN", "-resp_text", "-noverify"]).contains("Cert Status: good"))
    }

    /// A changed data file: total-failed with HASH_FAILURE, the failed constraint named, the finding kept.
    func testAChangedDataFileIsTotalFailedWithHashFailure() throws {
        let container = try signedContainer()
        let changed = path("changed.asice")
        let rezip = try runTool("/usr/bin/env", ["python3", "-c", """
            import sys, zipfile
            src = zipfile.ZipFile(sys.argv[1])
            with zipfile.ZipFile(sys.argv[2], 'w') as z:
                for info in src.infolist():
                    data = b'the contract, changed\\n' if info.filename == 'contract.txt' else src.read(info)
                    z.writestr(info, data, compress_type=info.compress_type)
            """, container, changed])
        XCTAssertEqual(rezip.status, 0, rezip.stderr)
        let file = path("changed.xml")
        let verify = try asicfs(["verify", changed, "--report=\(file)"] + settings)
        XCTAssertEqual(verify.status, 1, verify.stderr)
        XCTAssertTrue(verify.stdout.hasSuffix("Result: INVALID\n"), verify.stdout)
        let (problems, reports) = try check(file)
        XCTAssertEqual(problems, [])
        let report = try XCTUnwrap(reports.first)
        XCTAssertEqual(report["main"] as? String, "urn:etsi:019102:mainindication:total-failed")
        XCTAssertEqual(report["sub"] as? [String], ["urn:etsi:019102:subindication:HASH_FAILURE"])
        XCTAssertEqual((report["constraints"] as? [String: String])?["urn:asicfs:constraint:signed-data-objects"],
                       "urn:etsi:019102:mainindication:total-failed")
        XCTAssertTrue((report["findings"] as? [String] ?? []).contains("urn:asicfs:finding:invalid:reference-digest"), "\(report)")
    }

    /// An ASiC-S container with a token of the loopback TSA (openssl ts makes the query and
    /// takes the token out of the reply; Python posts it and writes the ZIP).
    func timeStampedASiCS() throws -> String {
        let document = try write("doc.txt", "the stamped document\n")
        let query = path("query.tsq"), reply = path("reply.tsr"), token = path("token.tst"), container = path("stamped.asics")
        XCTAssertEqual(try runTool("/usr/bin/openssl", ["ts", "-query", "-data", document, "-sha256", "-cert", "-out", query]).status, 0)
        let made = try runTool("/usr/bin/env", ["python3", "-c", """
            import sys, urllib.request, zipfile
            request = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], 'rb').read(),
                                             headers={'Content-Type': 'application/timestamp-query'})
            open(sys.argv[3], 'wb').write(urllib.request.urlopen(request).read())
            """, try services.tsaURL, query, reply])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(try runTool("/usr/bin/openssl", ["ts", "-reply", "-in", reply, "-token_out", "-out", token]).status, 0)
        let zipped = try runTool("/usr/bin/env", ["python3", "-c", """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                z.writestr('mimetype', 'application/vnd.etsi.asic-s+zip')
                z.write(sys.argv[2], 'doc.txt')
                z.write(sys.argv[3], 'META-INF/timestamp.tst')
            """, container, document, token])
        XCTAssertEqual(zipped.status, 0, zipped.stderr)
        return container
    }

    /// An ASiC-S time-stamp token is identified by its own bytes (it has no SignatureValue), its
    /// chain is the TSA's, and the token is among the objects.
    func testAnASiCSTokenIsReportedWithItsOwnIdentifier() throws {
        let container = try timeStampedASiCS()
        let file = path("asics.xml")
        let verify = try asicfs(["verify", container, "--report=\(file)"] + settings)
        assertSuccess(verify)
        let (problems, reports) = try check(file)
        XCTAssertEqual(problems, [])
        let report = try XCTUnwrap(reports.first)
        XCTAssertEqual(report["main"] as? String, "urn:etsi:019102:mainindication:total-passed")
        XCTAssertNil(report["signatureValue"] as? String)
        let token = try runTool("/usr/bin/env", ["python3", "-c",
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('META-INF/timestamp.tst').hex())", container]).stdout
        XCTAssertEqual(report["timestamps"] as? [String], [token])
        let digest = try runTool("/usr/bin/env", ["python3", "-c",
            "import base64, hashlib, sys; sys.stdout.write(base64.b64encode(hashlib.sha256(bytes.fromhex(sys.argv[1])).digest()).decode())", token]).stdout
        XCTAssertEqual(report["identifier"] as? String, digest)
        XCTAssertTrue(try openssl(try XCTUnwrap(report["signer"] as? String), ["x509", "-inform", "DER", "-in", "IN", "-noout", "-text"])
            .contains("Time Stamping"))
        XCTAssertNotNil(report["anchor"] as? String)
    }

    /// A report that cannot be written is an error (exit 1), after the verdict was printed.
    func testAnUnwritableReportFails() throws {
        let container = try signedContainer()
        let result = try asicfs(["verify", container, "--report=\(path("no-such-folder/report.xml"))"] + settings)
        assertFailure(result, mentions: ["cannot write the validation report"])
        XCTAssertTrue(result.stdout.hasSuffix("Result: VALID\n"), result.stdout)
    }
}

private extension Data {
    init(hexString: String) {
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            bytes.append(UInt8(hexString[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}
