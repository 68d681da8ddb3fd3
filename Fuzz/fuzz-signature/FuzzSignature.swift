// Fuzz target for XAdES signature documents (XAdESSignature.parse and the XML-DSig core checks,
// over libxml2 and its C14N via SafeXML, and OpenSSL for the certificate and the signature value).
//
// Normal build: a corpus replayer (`fuzz-signature FILE|DIR...`).
// With `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`: a libFuzzer target (libFuzzer owns main).
// See Fuzz/run.sh.
import Foundation
import FuzzSupport
import XAdES

enum FuzzSignature {
    /// Runs one input. Refusals and failed checks are expected; a trap, a sanitizer report or a
    /// broken promise is a bug.
    static func run(_ input: UnsafeRawBufferPointer, log: ((String) -> Void)? = nil) {
        let bytes = [UInt8](input)
        let signatures: [XAdESSignature]
        do {
            signatures = try XAdESSignature.parse(file: "META-INF/signatures0.xml", bytes: bytes)
        } catch {
            log?("rejected: \(error)")
            return
        }
        for signature in signatures {
            // Every check answers (nil or a sentence) instead of crashing, whatever the document holds.
            let problems = [signature.signedPropertiesProblem(), signature.signatureValueProblem(),
                            signature.signingCertificateReferenceProblem()]
            for stamp in signature.signatureTimeStamps { _ = try? signature.canonicalSignatureValue(stamp.canonicalizationURI) }
            for reference in signature.dataReferences {
                let name = reference.dataFileName
                check(ReferenceURI.decode(ReferenceURI.encode(name)) == name, "URI coding does not round-trip '\(name)'")
            }
            _ = signature.profile
            log?("parsed \(signature.id ?? "no Id"): \(signature.references.count) reference(s), problems: "
                 + problems.map { $0 ?? "none" }.joined(separator: " | "))
        }
        // Parsing is deterministic.
        let again = (try? XAdESSignature.parse(file: "META-INF/signatures0.xml", bytes: bytes))?.count
        check(again == signatures.count, "a second parse of the same bytes gave a different result")
    }

    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        fuzzCheck("fuzz-signature", condition(), message())
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzSignature.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_cdecl("fuzz_signature_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzerDriver(argc, argv) { data, size in
        FuzzSignature.run(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
        return 0
    }
}
#else
@main
struct FuzzSignatureReplayer {
    static func main() {
        let count = CorpusReplayer.run(arguments: Array(CommandLine.arguments.dropFirst()), tool: "fuzz-signature") {
            FuzzSignature.run($0, log: $1)
        }
        print("fuzz-signature: ran \(count) input(s) without a crash")
    }
}
#endif
