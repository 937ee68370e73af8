print("rig")
