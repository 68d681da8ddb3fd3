// swift-tools-version:6.0
// asicfs: ASiC-E signature containers as folders. No outside Swift packages: only the
// toolchain and Debian's C libraries (system-library targets below).
import PackageDescription

let package = Package(
    name: "asicfs",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "asicfs", targets: ["asicfs"]),
        .library(name: "ASiC", targets: ["ASiC"]),
    ],
    targets: [
        // Thin C modules: a module map plus one shim header each.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // ISA-L igzip: inflate, deflate and CRC-32 (zlib stays for crc32_combine, which ISA-L lacks).
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        // libqrencode: the QR code of a Smart-ID v3 device link (the PNG is written with CZlib).
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // A shared library loaded on first use (dlopen): see its header. Used by the next three.
        .target(name: "CLazyLibrary"),
        // libcurl, loaded on first use (dlopen): see Sources/CCurl/include/ccurl.h.
        // Its SPKI pin check runs inside the OpenSSL that libcurl uses (libssl3, linked by COpenSSL too).
        .target(name: "CCurl", dependencies: ["CLazyLibrary"], linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // libxml2, loaded on first use (dlopen): see Sources/CLibXML2/include/cxml.h.
        .target(name: "CLibXML2", dependencies: ["CLazyLibrary"]),
        // One reader of /dev/fuse at a time, polling briefly before it sleeps: see its header.
        .target(name: "CFuseReader", linkerSettings: [.linkedLibrary("fuse3")]),
        .systemLibrary(name: "CFuse3", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CPCSC", pkgConfig: "libpcsclite", providers: [.apt(["libpcsclite-dev"])]),
        // p11-kit, loaded on first use (dlopen): see Sources/CPKCS11/include/cpkcs11.h.
        .target(name: "CPKCS11", dependencies: ["CLazyLibrary"]),

        // libxml2 with every entity, DTD and network feature off: the only way XML is read.
        .target(name: "SafeXML", dependencies: ["CLibXML2"]),
        // The container core: ZIP, manifest, data files, atomic saves (and the SHA-256 of what it writes).
        .target(name: "ASiC", dependencies: ["CZlib", "CISAL", "SafeXML", "CLinux", "Crypto"]),
        // Settings shared by the command line and the filesystem: config file and -o overrides.
        .target(name: "Configuration"),
        // OpenSSL behind Swift types: certificates, digests, keys, PKCS#12, OCSP, RFC 3161 time-stamps.
        .target(name: "Crypto", dependencies: ["COpenSSL"]),
        // One libcurl client for every outside service: timeouts, proxy, pinning, cancellation.
        .target(name: "HTTP", dependencies: ["CCurl"]),
        // XAdES signature documents: build, canonicalize, parse, verify references and the signature value.
        .target(name: "XAdES", dependencies: ["Crypto", "SafeXML"]),
        // What to trust: trust anchors, EU trusted lists (LOTL -> national TL) and their service history.
        .target(name: "Trust", dependencies: ["Crypto", "SafeXML", "XAdES", "HTTP"]),
        // Validation of every signature in a container against Trust: verdicts, reasons, reports.
        .target(name: "Validation", dependencies: ["ASiC", "XAdES", "Trust", "Crypto"]),
        // Encrypted DigiDoc containers (CDOC 1.0/1.1 and CDOC2): read, decrypt, write.
        .target(name: "CDOC", dependencies: ["Crypto", "SafeXML", "CZlib", "CISAL"]),
        // Smart cards over PC/SC: APDUs, the reader connection, PACE and secure messaging.
        .target(name: "SmartCard", dependencies: ["CPCSC", "Crypto"]),
        // PKCS#11 modules (by path or p11-kit's registry), tokens, sessions, login and signing.
        .target(name: "PKCS11", dependencies: ["CPKCS11", "Crypto"]),
        // One signing session for every method, and the signers (one folder each), and the PIN entry they share.
        .target(name: "Signing", dependencies: ["CQRencode", "CZlib", "ASiC", "XAdES", "Trust", "Crypto", "HTTP", "Validation", "Configuration", "SmartCard", "PKCS11", "CDOC"]),
        // The FUSE filesystem: a container as a folder, with the .asicfs control folder.
        .target(name: "FS", dependencies: ["ASiC", "XAdES", "Crypto", "CFuse3", "CFuseReader", "CLinux", "Configuration", "Validation", "Signing", "CDOC"]),
        // Command-line parsing, configuration and the commands; no container logic of its own.
        .target(name: "CLI", dependencies: ["ASiC", "CLinux", "FS", "Configuration", "Validation", "Signing", "SmartCard", "Crypto", "HTTP", "XAdES", "Trust", "PKCS11", "CDOC"]),
        .executableTarget(name: "asicfs", dependencies: ["CLI"]),

        // Fuzz entry points: a corpus replayer by default, libFuzzer targets with -DFUZZING.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "fuzz-zip", dependencies: ["ASiC", "FuzzSupport"], path: "Fuzz/fuzz-zip"),
        .executableTarget(name: "fuzz-manifest", dependencies: ["ASiC", "FuzzSupport"], path: "Fuzz/fuzz-manifest"),
        .executableTarget(name: "fuzz-signature", dependencies: ["XAdES", "FuzzSupport"], path: "Fuzz/fuzz-signature"),
        .executableTarget(name: "fuzz-cdoc1", dependencies: ["CDOC", "FuzzSupport"], path: "Fuzz/fuzz-cdoc1"),
        // Benchmark harness (run by `make bench`, not by CI).
        .executableTarget(name: "asicfs-bench", dependencies: ["ASiC", "Crypto", "Signing"], path: "Benchmarks/asicfs-bench"),
        // CDOC2 decrypt/encrypt without the CLI: the CI corpus check and the CDOC benchmark.

        // The tests make their own data: Tests/TestTools and contrib/testpki (no copied files).
        .testTarget(name: "ASiCTests", dependencies: ["ASiC", "Crypto", "TestTools"]),
        // Helpers shared by the test targets (running real programs).
        .target(name: "TestTools", path: "Tests/TestTools"),
        .testTarget(name: "CDOCTests", dependencies: ["CDOC", "Crypto", "TestTools"]),
        .testTarget(name: "FSTests", dependencies: ["FS", "TestTools", "CDOC", "Crypto"]),
        // The test PKI and its OCSP/TSA services (contrib/testpki), used by the signing tests.
        .testTarget(name: "ServicesTests", dependencies: ["TestTools"]),
        // OpenSSL wrappers, OCSP and time-stamp clients against the loopback services.
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "HTTP", "TestTools"]),
        // Trusted lists: the conformance EE_T-*.xml scenarios.
        .testTarget(name: "TrustTests", dependencies: ["Trust", "TestTools"]),
        // Signing and validation end to end: corpus verdicts, round trips, tampering, pyasice.
        .testTarget(name: "SignatureTests", dependencies: ["Signing", "Validation", "XAdES", "ASiC", "Trust", "Crypto", "Configuration", "TestTools", "PKCS11", "CDOC"],
                    exclude: ["Interop"]),
        // APDUs, PACE (against the ICAO 9303 worked example) and secure messaging, and the virtual ID-card over pcscd.
        .testTarget(name: "SmartCardTests", dependencies: ["SmartCard", "Crypto", "TestTools"]),
        // Who decrypts: the ID-card (virtual card over pcscd), PKCS#11 tokens (SoftHSM, OpenSC).
        .testTarget(name: "RecipientKeyTests", dependencies: ["Signing", "CDOC", "Crypto", "PKCS11", "Configuration", "TestTools"]),
        .testTarget(name: "CLITests", dependencies: ["CLI", "Configuration", "TestTools", "CDOC"]),
    ]
)
