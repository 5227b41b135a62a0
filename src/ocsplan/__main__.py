from ocsplan.cli import main

main()
