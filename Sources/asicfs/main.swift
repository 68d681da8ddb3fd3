import CLI
import Foundation

exit(Main.run(CommandLine.arguments))
